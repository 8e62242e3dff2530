#!/usr/bin/python3
"""Summarizes `placeto eval` reports of several seeds (same graphs) into one table per method.

Usage: summarize_eval.py OUT_PREFIX LABEL=EVAL_CSV [LABEL=EVAL_CSV ...]

Per method and seed it takes the geometric mean over the graphs of runtime / best classical
(the report's "best-classical" row of the same graph), runtime / single and runtime / lower
bound; the table shows mean +- sample sd of those over the seeds, the median place_ms (all
seeds pooled), the fraction of (seed, graph) pairs where the method is strictly faster than
the best classical placer, and the number of infeasible placements (left out of the
geometric means, counted as not beating). The pseudo-rows best-classical and lower-bound are
references, not methods, and get no row. `placeto compare` CSVs work too (they carry the same
columns and a best-classical row).

Writes OUT_PREFIX.md (the table, also printed) and OUT_PREFIX_ratios.png (per-method
distribution of per-graph runtime / best classical, all seeds pooled, sorted by median).
"""
import argparse
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import plotlib  # noqa: E402
from plotlib import InputError  # noqa: E402

REFERENCE_ROWS = ("best-classical", "lower-bound")
REQUIRED = ("graph", "method", "runtime_us", "feasible", "place_ms", "lower_bound_us")
BEAT_TOLERANCE = 1e-9  # a tie with the best classical placer (it is one of them) is no win


def load_report(path):
    """{graph: {method: (runtime_us, feasible, place_ms, lower_bound_us)}} plus method order."""
    graphs, order = {}, []
    for row in plotlib.read_csv(path, REQUIRED):
        g, m = row["graph"], row["method"]
        entry = (plotlib.number(path, row, "runtime_us"), plotlib.boolean(path, row, "feasible"),
                 plotlib.number(path, row, "place_ms"),
                 plotlib.number(path, row, "lower_bound_us"))
        if m in graphs.setdefault(g, {}):
            raise InputError(f"{path}:{row['_line']}: second row for graph {g}, method {m}")
        graphs[g][m] = entry
        if m not in order:
            order.append(m)
    if not graphs:
        raise InputError(f"{path}: no rows")
    for g, methods in graphs.items():
        for needed in ("best-classical", "single"):
            if needed not in methods:
                raise InputError(f"{path}: graph {g} has no '{needed}' row")
    return graphs, order


def per_graph_ratios(graphs, method):
    """Lists (graph, vs_best, vs_single, vs_lb); a ratio is None when undefined (infeasible)."""
    out = []
    for g in sorted(graphs):
        m = graphs[g].get(method)
        if m is None:
            continue
        runtime, feasible, _, lb = m
        best, single = graphs[g]["best-classical"], graphs[g]["single"]
        ok = feasible and runtime > 0
        out.append((g, runtime / best[0] if ok and best[1] and best[0] > 0 else None,
                    runtime / single[0] if ok and single[1] and single[0] > 0 else None,
                    runtime / lb if ok and lb > 0 else None))
    return out


def fmt(mean, sd):
    return "n/a" if math.isnan(mean) else f"{mean:.3f} ± {sd:.3f}"


def summarize(reports):
    """Rows of the table, sorted by mean ratio to the best classical placer, and the pooled
    per-graph ratios to best classical per method (for the plot)."""
    methods = []
    for _, (_, order) in reports:
        methods += [m for m in order if m not in methods and m not in REFERENCE_ROWS]
    rows, pooled = [], {}
    for m in methods:
        per_seed = {"best": [], "single": [], "lb": []}
        ms, wins, pairs, failures = [], 0, 0, 0
        pooled[m] = []
        for _, (graphs, _) in reports:
            ratios = per_graph_ratios(graphs, m)
            if not ratios:
                continue
            for key, idx in (("best", 1), ("single", 2), ("lb", 3)):
                vals = [r[idx] for r in ratios if r[idx] is not None]
                if vals:
                    per_seed[key].append(plotlib.geomean(vals))
            for g, vs_best, _, _ in ratios:
                pairs += 1
                ms.append(graphs[g][m][2])
                if vs_best is None:
                    failures += 1
                    continue
                pooled[m].append(vs_best)
                wins += vs_best < 1 - BEAT_TOLERANCE
        best_mean, best_sd = plotlib.mean_sd(per_seed["best"])
        rows.append((best_mean if not math.isnan(best_mean) else math.inf, m, [
            m, len(per_seed["best"]), fmt(best_mean, best_sd),
            fmt(*plotlib.mean_sd(per_seed["single"])), fmt(*plotlib.mean_sd(per_seed["lb"])),
            f"{plotlib.median(ms):.3f}", f"{wins / pairs:.2f}" if pairs else "n/a", failures
        ]))
    rows.sort(key=lambda r: (r[0], r[1]))
    return [r[2] for r in rows], pooled


def plot_ratios(pooled, out_png, title):
    plt = plotlib.pyplot()
    methods = sorted((m for m in pooled if pooled[m]), key=lambda m: (plotlib.median(pooled[m]), m))
    if not methods:
        raise InputError("no feasible placement in any report: nothing to plot")
    fig, ax = plt.subplots(figsize=(max(6, 0.8 * len(methods) + 2), 4.5))
    data = [pooled[m] for m in methods]
    ax.boxplot(data, whis=(0, 100), widths=0.6, medianprops={"color": "black"})
    labelled = set()
    for i, vals in enumerate(data, start=1):
        # Deterministic horizontal spread so coincident points stay visible.
        xs = [i + 0.25 * (((k * 0.618034) % 1.0) - 0.5) for k in range(len(vals))]
        kind = "policy" if methods[i - 1].startswith("policy") else "other placers"
        ax.scatter(xs, vals, s=12, alpha=0.6, zorder=3,
                   color="tab:red" if kind == "policy" else "tab:blue",
                   label=None if kind in labelled else f"{kind} (one point per seed x graph)")
        labelled.add(kind)
    ax.axhline(1.0, color="gray", linestyle="--", linewidth=1, label="best classical")
    lo, hi = min(min(d) for d in data), max(max(d) for d in data)
    if hi / lo > 4:
        ax.set_yscale("log")
    ax.set_xticks(range(1, len(methods) + 1))
    ax.set_xticklabels(methods, rotation=35, ha="right")
    ax.set_ylabel("runtime / best classical (per graph)")
    ax.set_title(title)
    ax.grid(axis="y", alpha=0.3)
    ax.legend(loc="upper left")
    fig.tight_layout()
    fig.savefig(out_png, dpi=120)
    plt.close(fig)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out_prefix", help="writes OUT_PREFIX.md and OUT_PREFIX_ratios.png")
    ap.add_argument("reports", nargs="+", metavar="LABEL=EVAL_CSV")
    ap.add_argument("--own-graphs", action="store_true",
                    help="each report places its own graphs (one family per seed, as "
                         "rl_no_teacher.sh); by default they must cover the same graphs")
    a = ap.parse_args()
    reports = []
    for arg in a.reports:
        label, path = plotlib.label_arg(arg, "EVAL_CSV")
        reports.append((label, load_report(path)))
    first_label, (first_graphs, _) = reports[0]
    for label, (graphs, _) in reports[1:]:
        if set(graphs) != set(first_graphs) and not a.own_graphs:
            diff = sorted(set(graphs) ^ set(first_graphs))
            raise InputError(f"{label} and {first_label} cover different graphs "
                             f"(e.g. {', '.join(diff[:3])}); pass reports of the same graphs")
    rows, pooled = summarize(reports)
    header = ["method", "seeds", "vs best classical", "vs single", "vs lower bound",
              "median place_ms", "beats best classical", "infeasible"]
    seeds = ", ".join(label for label, _ in reports)
    over = (f"each seed's own {len(first_graphs)} graphs" if a.own_graphs else
            f"{len(first_graphs)} graphs")
    table = (f"Geometric mean over {over}, mean ± sample sd over "
             f"{len(reports)} seed(s) ({seeds}); <1 is faster. Infeasible placements are "
             "left out of the means (column infeasible) and never beat.\n\n" +
             plotlib.markdown_table(header, rows))
    sys.stdout.write(table)
    with open(a.out_prefix + ".md", "w") as f:
        f.write(table)
    plot_ratios(pooled, a.out_prefix + "_ratios.png",
                f"{len(first_graphs)} graphs x {len(reports)} seed(s)")


if __name__ == "__main__":
    plotlib.run_main(main)
