#!/usr/bin/env python3
"""Summarizes experiments/chain_anneal_check.sh: per family and cluster, chain-anneal / anneal
and auto / anneal (geometric mean over graphs and seeds of the per-run step ratios where both
placements fit, and the largest), and how many placements of each method do not fit.

    python3 experiments/summarize_chain_anneal_check.py runs/chain_anneal_check
"""
import csv
import glob
import math
import os
import sys
from collections import defaultdict


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "runs/chain_anneal_check"
    ratios = defaultdict(lambda: defaultdict(list))
    unfit = defaultdict(lambda: defaultdict(int))
    for path in sorted(glob.glob(os.path.join(root, "runs", "*", "*", "*_s*.csv"))):
        fam = path.split(os.sep)[-3]
        cluster = os.path.basename(path).split("_s")[0]
        with open(path, newline="") as fh:
            rows = {r["method"]: r for r in csv.DictReader(fh)}
        missing = [m for m in ("anneal", "chain-anneal", "auto") if m not in rows]
        if missing:
            sys.exit("summarize_chain_anneal_check.py: %s has no row for %s"
                     % (path, ", ".join(missing)))
        base = float(rows["anneal"]["runtime_us"])
        ratios[(fam, cluster)]  # every (family, cluster) gets a row, even with no ratio
        for m in ("anneal", "chain-anneal", "auto"):
            if rows[m]["feasible"] != "true":
                unfit[(fam, cluster)][m] += 1
        for m in ("chain-anneal", "auto"):
            # A step ratio means something only when both placements fit.
            if rows[m]["feasible"] == "true" and rows["anneal"]["feasible"] == "true":
                ratios[(fam, cluster)][m].append(float(rows[m]["runtime_us"]) / base)
    if not ratios and not unfit:
        sys.exit("summarize_chain_anneal_check.py: no runs under %s" % root)
    g = lambda xs: math.exp(sum(map(math.log, xs)) / len(xs))
    fmt = lambda f, xs: "%.3f" % f(xs) if xs else "-"
    print("| family | cluster | runs | chain-anneal / anneal | max | auto / anneal | max | "
          "do not fit (anneal, chain-anneal, auto) |")
    print("|---|---|---|---|---|---|---|---|")
    every = defaultdict(list)
    for (fam, cluster), r in sorted(ratios.items()):
        c, a = r["chain-anneal"], r["auto"]
        every["chain-anneal"] += c
        every["auto"] += a
        u = unfit[(fam, cluster)]
        print("| %s | %s | %d, %d | %s | %s | %s | %s | %d, %d, %d |" % (
            fam, "D = 3, no cap" if cluster == "d3" else "D = 4, 1.2 x share", len(c), len(a),
            fmt(g, c), fmt(max, c), fmt(g, a), fmt(max, a), u["anneal"], u["chain-anneal"],
            u["auto"]))
    c, a = every["chain-anneal"], every["auto"]
    print("| all | | %d, %d | %s | %s | %s | %s | |" % (
        len(c), len(a), fmt(g, c), fmt(max, c), fmt(g, a), fmt(max, a)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
