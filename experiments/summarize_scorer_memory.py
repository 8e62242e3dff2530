#!/usr/bin/env python3
"""Summary of experiments/scorer_memory_check.sh: per family, device count and capacity,
geometric means over graphs and seeds of
  policy-search @100 ms / the better of anneal and descent @100 ms (same seed), and
  scorer-greedy / best,
for the models before (old) and after (new) they saw memory, and how many placements fit.
Usage: summarize_scorer_memory.py OUT_DIR   (prints a Markdown table)"""
import csv
import glob
import math
import os
import re
import sys
from collections import defaultdict


def read(path):
    with open(path) as f:
        return {r["method"]: r for r in csv.DictReader(f)}


def geo(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def main():
    out = sys.argv[1]
    cells = defaultdict(lambda: defaultdict(list))
    fits = defaultdict(lambda: defaultdict(int))
    runs = defaultdict(int)
    for old_csv in sorted(glob.glob(os.path.join(out, "*", "*", "d*_s*_old.csv"))):
        m = re.search(r"/(\w+)/[^/]+/d(\d)_(none|[\d.]+)_s(\d+)_old\.csv$", old_csv)
        if not m:
            continue
        fam, d, cap = m.group(1), int(m.group(2)), m.group(3)
        new_csv = old_csv.replace("_old.csv", "_new.csv")
        if not os.path.exists(new_csv):
            continue
        o, n = read(old_csv), read(new_csv)
        key = (fam, d, cap)
        runs[key] += 1
        rt = lambda r: float(r["runtime_us"])
        ok = lambda r: r["feasible"] == "true"
        # The searches' reference: the better of anneal and descent that fits (both do, as
        # they start from best's placement whenever it fits).
        better = min(rt(o["anneal"]), rt(o["descent"]))
        for tag, rows in (("old", o), ("new", n)):
            cells[key]["ps_" + tag].append(rt(rows["policy-search"]) / better)
            cells[key]["greedy_" + tag].append(rt(rows["scorer-greedy"]) / rt(o["best"]))
            fits[key]["ps_" + tag] += ok(rows["policy-search"])
            fits[key]["greedy_" + tag] += ok(rows["scorer-greedy"])
        fits[key]["best"] += ok(o["best"])
    print("| family | D | capacity | runs | policy-search / better search: before | after "
          "| scorer-greedy / best: before | after | fit (best, ps before/after) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for key in sorted(cells):
        fam, d, cap = key
        c, f = cells[key], fits[key]
        print(f"| {fam} | {d} | {'uncapped' if cap == 'none' else cap + 'x share'} | {runs[key]} "
              f"| {geo(c['ps_old']):.3f} | {geo(c['ps_new']):.3f} "
              f"| {geo(c['greedy_old']):.3f} | {geo(c['greedy_new']):.3f} "
              f"| {f['best']}, {f['ps_old']}/{f['ps_new']} |")
    for cap in ("none", "1.2"):
        for tag in ("ps", "greedy"):
            o = [x for k in cells if k[2] == cap for x in cells[k][tag + "_old"]]
            n = [x for k in cells if k[2] == cap for x in cells[k][tag + "_new"]]
            print(f"\nall {'uncapped' if cap == 'none' else 'capped at 1.2x'}, {tag}: "
                  f"before {geo(o):.3f}, after {geo(n):.3f} ({len(o)} runs)", end="")
    print()


if __name__ == "__main__":
    main()
