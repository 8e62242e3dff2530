#!/usr/bin/env python3
"""Issue #33's bar from two experiments/memory_zoo.sh runs: `auto` over `anneal` per model,
device count and T, as the geometric mean over seeds of the per-seed step ratios and the
worst seed.  BASE is a run with anneal and auto (no model); OTHER is a run of auto alone
(e.g. AUTO_SCORER=1 SCORER=models/default.h5 SEARCHES=auto), compared with BASE's anneal.

Usage: summarize_memory_bar.py BASE/results.csv OTHER/results.csv   (prints a Markdown table)"""
import collections
import csv
import math
import sys


def load(path):
    rows = {}
    for r in csv.DictReader(open(path)):
        key = (r["model"], r["devices"], r["factor"], r["time_ms"], r["seed"], r["method"])
        rows[key] = r
    return rows


def gmean(xs):
    return math.exp(sum(map(math.log, xs)) / len(xs))


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    base, other = load(sys.argv[1]), load(sys.argv[2])
    step = lambda r: float(r["runtime_us"])
    cells = collections.defaultdict(lambda: ([], []))  # cell -> (other / anneal, base auto / anneal)
    for key, r in base.items():
        if key[5] != "anneal":
            continue
        cell, seed = key[:4], key[4]
        mine = other.get(cell + (seed, "auto"))
        theirs = base.get(cell + (seed, "auto"))
        if mine is not None:
            cells[cell][0].append(step(mine) / step(r))
        if theirs is not None:
            cells[cell][1].append(step(theirs) / step(r))
    print("| model | D | f | T (s) | auto (BASE) / anneal | auto (OTHER) / anneal | worst seed (OTHER) |")
    print("|---|---|---|---|---|---|---|")
    for cell in sorted(cells):
        o, b = cells[cell]
        fmt = lambda xs: "%.3f" % gmean(xs) if xs else "-"
        worst = "%.3f" % max(o) if o else "-"
        print("| %s | %s | %s | %g | %s | %s | %s |" % (cell[0], cell[1], cell[2],
              int(cell[3]) / 1000, fmt(b), fmt(o), worst))


if __name__ == "__main__":
    main()
