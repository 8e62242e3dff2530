#!/usr/bin/python3
"""Summarizes experiments/graph_scale.sh: a markdown table and a log-log plot.

Usage: summarize_graph_scale.py results.tsv summary.md scale.png

The table has one row per graph (by op count) and, per method, its placement time (the
place_ms that `placeto place` prints: start-up and file reading do not count) and its step
over `best`'s step on the same graph; the plot shows the same two quantities against the op
count, log-log.
"""
import csv
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

ORDER = ["single", "metis", "heft", "m-etf", "m-sct", "m-topo", "partition", "best", "policy",
         "anneal", "policy-search", "auto"]


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    tsv, md, png = sys.argv[1:]
    rows = list(csv.DictReader(open(tsv), delimiter="\t"))
    if not rows:
        sys.exit("%s: no rows" % tsv)
    by_graph = defaultdict(dict)
    ops = {}
    for r in rows:
        by_graph[r["graph"]][r["method"]] = r
        ops[r["graph"]] = int(r["ops"])
    graphs = sorted(by_graph, key=lambda g: (ops[g], g))
    methods = [m for m in ORDER if any(m in by_graph[g] for g in graphs)]
    lines = ["Placement time (`place_ms`; searches are given T) and step over `best`'s step; "
             "peak memory is the largest of any method on the graph.", "",
             "| graph | ops | T (ms) | peak MB | " + " | ".join(methods) + " |",
             "|---|---|---|---|" + "---|" * len(methods)]
    for g in graphs:
        best = by_graph[g].get("best")
        best_step = float(best["step_us"]) if best else None
        t = max((int(r["time_ms"]) for r in by_graph[g].values()), default=0)
        rss = max(int(r["rss_mb"]) for r in by_graph[g].values())
        cells = []
        for m in methods:
            r = by_graph[g].get(m)
            if not r:
                cells.append("-")
                continue
            ratio = "%.3f" % (float(r["step_us"]) / best_step) if best_step else "?"
            feasible = "" if r["feasible"] == "true" else " (infeasible)"
            cells.append("%s ms, %s%s" % (fmt_ms(float(r["place_ms"])), ratio, feasible))
        lines.append("| %s | %d | %d | %d | %s |" % (g, ops[g], t, rss, " | ".join(cells)))
    open(md, "w").write("\n".join(lines) + "\n")
    print("\n".join(lines))

    fig, (a, b) = plt.subplots(1, 2, figsize=(13, 5))
    # One line per method and kind of graph (generated ptb: solid; imported decoders: dotted),
    # in the method's colour.
    kinds = sorted({kind_of(g) for g in graphs})
    for i, m in enumerate(methods):
        colour = "C%d" % (i % 10)
        for k, kind in enumerate(kinds):
            pts = sorted((ops[g], float(by_graph[g][m]["place_ms"]),
                          float(by_graph[g][m]["step_us"]) / float(by_graph[g]["best"]["step_us"]))
                         for g in graphs
                         if kind_of(g) == kind and m in by_graph[g] and "best" in by_graph[g])
            if not pts:
                continue
            learned = m in ("policy", "auto", "policy-search", "anneal")
            style = dict(linestyle="-" if kind == "ptb" else ":", marker="o" if learned else ".",
                         color=colour, label=m if k == 0 else None,
                         linewidth=2 if learned else 1)
            a.plot([p[0] for p in pts], [max(p[1], 1e-3) for p in pts], **style)
            b.plot([p[0] for p in pts], [p[2] for p in pts], **style)
    a.set_xscale("log")
    a.set_yscale("log")
    a.set_xlabel("ops")
    a.set_ylabel("placement time (ms, place_ms)")
    a.set_title("Placement time against graph size\n"
                "solid: generated ptb graphs; dotted: imported decoders")
    a.grid(True, which="both", alpha=0.3)
    b.set_xscale("log")
    b.set_yscale("log")
    b.set_xlabel("ops")
    b.set_ylabel("step / best's step")
    b.set_title("Step against graph size (below 1: faster than best)\n"
                "solid: generated ptb graphs; dotted: imported decoders")
    b.grid(True, which="both", alpha=0.3)
    b.legend(fontsize=8, ncol=2)
    fig.tight_layout()
    fig.savefig(png, dpi=110)


def kind_of(graph):
    """'ptb' for the generated graphs, 'decoder' for the imported ones."""
    return "ptb" if graph.startswith("ptb") else "decoder"


def fmt_ms(x):
    if x >= 100:
        return "%.0f" % x
    if x >= 1:
        return "%.1f" % x
    return "%.2f" % x


if __name__ == "__main__":
    main()
