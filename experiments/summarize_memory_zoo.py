#!/usr/bin/env python3
"""Summarizes experiments/memory_zoo.sh: one CSV of every run and a markdown report.

    python3 experiments/summarize_memory_zoo.py runs/memory_zoo

Reads <dir>/<model>/d<D>_f<f>/s<seed>_t<T>.csv (placeto compare) and
s<seed>_t<T>.policy-search.json (placeto place) and writes
  <dir>/results.csv  one row per model, D, f, T, seed and method
  <dir>/summary.md   per cell: the lower bound, each method's step (geometric mean over the
                     seeds; a method counts as fitting in a cell only if every seed's
                     placement fits), the winner; then auto / anneal and auto / partition
                     (geometric means over seeds of the per-seed ratios); then the checks of
                     issue #33's "What it must show" on every (cell, T, seed).
Fast placers do not depend on T: they are reported once, from the runs at the smallest T.
Plain Python (no numpy), so it runs without the torch packages.
"""
import csv
import glob
import json
import math
import os
import re
import sys
from collections import defaultdict

FAST = ["single", "random", "round-robin", "expert", "metis", "heft", "m-etf", "m-sct",
        "m-topo", "partition", "best"]
SEARCHES = ["anneal", "chain-anneal", "descent", "auto", "policy-search"]
FIELDS = ["model", "devices", "factor", "capacity_bytes", "time_ms", "seed", "method",
          "feasible", "max_rel_overflow", "runtime_us", "peak_mem_bytes_max", "lower_bound_us",
          "place_ms", "note"]
# The infeasibility message of run_placer: each device over capacity with its need.
NEED = re.compile(r"peak activations (\d+) \+ parameters (\d+) bytes > capacity (\d+)")


def max_rel_overflow(note):
    """The memory rule's largest relative overflow, from an infeasibility message (0: fits)."""
    over = [(int(a) + int(p) - int(c)) / int(c) for a, p, c in NEED.findall(note)]
    return max(over) if over else 0.0


def read_runs(root):
    rows = []
    for cell in sorted(glob.glob(os.path.join(root, "*", "d*_f*"))):
        model = os.path.basename(os.path.dirname(cell))
        d, f = re.fullmatch(r"d(\d+)_f([\d.]+)", os.path.basename(cell)).groups()
        cap = ""
        with open(os.path.join(cell, "cluster.yaml")) as y:
            for line in y:
                if line.startswith("memory_bytes:"):
                    cap = line.split(":")[1].strip()
        base = dict(model=model, devices=int(d), factor=f, capacity_bytes=cap)
        for path in sorted(glob.glob(os.path.join(cell, "s*_t*.csv"))):
            s, t = re.fullmatch(r"s(\d+)_t(\d+)\.csv", os.path.basename(path)).groups()
            with open(path) as fh:
                for r in csv.DictReader(fh):
                    if r["method"] == "best-classical":
                        continue
                    feasible = int(r["feasible"] in ("1", "true"))
                    rows.append(dict(base, time_ms=int(t), seed=int(s), method=r["method"],
                                     feasible=feasible,
                                     max_rel_overflow=0.0 if feasible else
                                     max_rel_overflow(r["note"]),
                                     runtime_us=float(r["runtime_us"]),
                                     peak_mem_bytes_max=r["peak_mem_bytes_max"],
                                     lower_bound_us=float(r["lower_bound_us"]),
                                     place_ms=float(r["place_ms"]), note=r["note"]))
        for path in sorted(glob.glob(os.path.join(cell, "s*_t*.policy-search.json"))):
            s, t = re.fullmatch(r"s(\d+)_t(\d+)\.policy-search\.json",
                                os.path.basename(path)).groups()
            with open(path) as fh:
                j = json.load(fh)
            need = [a + p for a, p in zip(j["peak_mem_bytes"], j["param_bytes"])]
            rows.append(dict(base, time_ms=int(t), seed=int(s), method="policy-search",
                             feasible=int(bool(j["feasible"])),
                             max_rel_overflow=max(0.0, max(n / float(cap) - 1 for n in need)),
                             runtime_us=j["runtime_us"],
                             peak_mem_bytes_max=max(j["peak_mem_bytes"]),
                             lower_bound_us=j["lower_bound_us"], place_ms=j["place_ms"],
                             note=j.get("note", j.get("message", ""))))
    return rows


def gmean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def checks(rows):
    """Issue #33's bars, checked on every (model, D, f, T, seed): the lines of a report."""
    runs = defaultdict(dict)
    for r in rows:
        runs[(r["model"], r["devices"], float(r["factor"]), r["time_ms"], r["seed"])][
            r["method"]] = r
    fails = defaultdict(list)
    counts = defaultdict(int)
    for key, m in sorted(runs.items()):
        where = "%s D=%d f=%g T=%gs seed %d" % (key[0], key[1], key[2], key[3] / 1000, key[4])
        if "partition" in m and m["partition"]["feasible"]:
            for p in ("m-etf", "m-sct", "m-topo"):
                if p in m:
                    counts["memory-aware fit where partition fits"] += 1
                    if not m[p]["feasible"]:
                        fails["memory-aware fit where partition fits"].append(p + ": " + where)
        fast = [r for n, r in m.items() if n in FAST and n != "best"]
        # best is the best fast placement; auto also searches, so it must fit when any
        # method of the run (searches included) found a placement that fits.
        for p, pool in (("best", FAST), ("auto", m)):
            if p not in m:
                continue
            fits = [n for n, r in m.items() if n in pool and r["feasible"]]
            check = "%s fits when any %s did" % (p, "fast placer" if p == "best" else "method")
            if fits:
                counts[check] += 1
                if not m[p]["feasible"]:
                    fails[check].append("%s (fit: %s)" % (where, ",".join(fits)))
            elif fast:
                least = min(r["max_rel_overflow"] for r in fast)
                counts["none fits: overflow <= least fast placer's"] += 1
                if m[p]["max_rel_overflow"] > least * (1 + 1e-4) + 1e-6:
                    fails["none fits: overflow <= least fast placer's"].append(
                        "%s: %s (%.4f > %.4f)" % (p, where, m[p]["max_rel_overflow"], least))
        if key[0].startswith("gpt") and "auto" in m and "partition" in m and \
                m["partition"]["feasible"]:
            counts["decoders: auto no slower than partition"] += 1
            a, b = m["auto"], m["partition"]
            if not a["feasible"] or a["runtime_us"] > b["runtime_us"] * (1 + 1e-9):
                fails["decoders: auto no slower than partition"].append(
                    "%s (%.0f vs %.0f us)" % (where, a["runtime_us"], b["runtime_us"]))
    out = ["| check (every model, D, f, T, seed) | cases | failed |", "|---|---|---|"]
    for name in sorted(counts):
        out.append("| %s | %d | %d |" % (name, counts[name], len(fails[name])))
    for name in sorted(n for n in fails if fails[n]):
        out += ["", "Failed: " + name] + ["- " + f for f in fails[name]]
    return out


def fallbacks(rows, t_ms):
    """How often each fast placer returned another's answer (its note says "fell back to")."""
    n, fell = defaultdict(int), defaultdict(int)
    for r in rows:
        if r["method"] in FAST and r["method"] != "best" and r["time_ms"] == t_ms:
            n[r["method"]] += 1
            fell[r["method"]] += "fell back to" in r["note"]
    out = ["Fallbacks (fast placers, every model, D, f and seed): runs whose note says "
           "\"fell back to\".", "", "| method | runs | fell back |", "|---|---|---|"]
    return out + ["| %s | %d | %d |" % (m, n[m], fell[m]) for m in FAST if m in n]


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "runs/memory_zoo"
    rows = read_runs(root)
    if not rows:
        sys.exit("summarize_memory_zoo.py: no runs under %s (<model>/d<D>_f<f>/s<seed>_t<T>.csv)"
                 % root)
    with open(os.path.join(root, "results.csv"), "w", newline="") as fh:
        w = csv.DictWriter(fh, FIELDS)
        w.writeheader()
        for r in rows:
            # The infeasibility message is long; max_rel_overflow keeps what it says.
            note = re.sub(r"no feasible placement found by .*", "does not fit", r["note"])
            w.writerow(dict({k: r[k] for k in FIELDS}, note=note,
                            max_rel_overflow="%.6g" % r["max_rel_overflow"]))

    cells = defaultdict(list)
    for r in rows:
        cells[(r["model"], r["devices"], float(r["factor"]))].append(r)
    times = sorted({r["time_ms"] for r in rows})
    columns = FAST + ["%s@%gs" % (m, t / 1000) for t in times for m in SEARCHES]

    def runs_of(cell_rows, column):
        method, _, t = column.partition("@")
        if t:
            t_ms = round(float(t[:-1]) * 1000)
        else:
            t_ms = min(r["time_ms"] for r in cell_rows)
        return [r for r in cell_rows if r["method"] == method and r["time_ms"] == t_ms]

    out = ["Steps in ms (geometric mean over seeds); `x` = does not fit in at least one seed "
           "(k/n fitting seeds shown); the winner is the fastest method that fits in every "
           "seed. Fast placers from the runs at T = %g s." % (times[0] / 1000), ""]
    present = [c for c in columns if any(runs_of(v, c) for v in cells.values())]
    out.append("| model | D | f | lower bound | " + " | ".join(present) + " | winner |")
    out.append("|" + "---|" * (len(present) + 5))
    ratios = defaultdict(list)  # (model, D, f, T, baseline) -> per-seed auto / baseline
    for key in sorted(cells):
        cell_rows = cells[key]
        lb = cell_rows[0]["lower_bound_us"]
        line = ["%s | %d | %g | %.0f" % (key[0], key[1], key[2], lb / 1000)]
        best = None
        for c in present:
            runs = runs_of(cell_rows, c)
            if not runs:
                line.append("")
                continue
            ok = [r for r in runs if r["feasible"]]
            if len(ok) == len(runs):
                step = gmean([r["runtime_us"] for r in runs]) / 1000
                line.append("%.0f" % step)
                if best is None or step < best[0]:
                    best = (step, c)
            else:
                line.append("x (%d/%d)" % (len(ok), len(runs)))
        line.append("%s (%.0f)" % (best[1], best[0]) if best else "none fits")
        out.append("| " + " | ".join(line) + " |")
        for t in times:
            for base in ("anneal", "partition"):
                by_seed = defaultdict(dict)
                for r in cell_rows:
                    if r["method"] == "auto" and r["time_ms"] == t:
                        by_seed[r["seed"]]["auto"] = r
                    if r["method"] == base and r["time_ms"] == t:
                        by_seed[r["seed"]]["base"] = r
                for s, pair in sorted(by_seed.items()):
                    if len(pair) == 2:
                        ratios[key + (t, base)].append(pair)
    out += ["", "auto / baseline: geometric mean over seeds of the per-seed step ratios "
            "(both must fit; `x` counts the seeds where one does not).", "",
            "| model | D | f | T (s) | baseline | auto / baseline | seeds | max | both fit |",
            "|---|---|---|---|---|---|---|---|---|"]
    for key in sorted(ratios):
        pairs = ratios[key]
        fit = [p for p in pairs if p["auto"]["feasible"] and p["base"]["feasible"]]
        rs = [p["auto"]["runtime_us"] / p["base"]["runtime_us"] for p in fit]
        out.append("| %s | %d | %g | %g | %s | %s | %d | %s | %d/%d |" % (
            key[0], key[1], key[2], key[3] / 1000, key[4],
            "%.4f" % gmean(rs) if rs else "-", len(pairs),
            "%.4f" % max(rs) if rs else "-", len(fit), len(pairs)))
    out += [""] + checks(rows) + [""] + fallbacks(rows, times[0])
    with open(os.path.join(root, "summary.md"), "w") as fh:
        fh.write("\n".join(out) + "\n")
    print("\n".join(out))
    print("\nwrote %s and %s (%d runs)" % (os.path.join(root, "results.csv"),
                                            os.path.join(root, "summary.md"), len(rows)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
