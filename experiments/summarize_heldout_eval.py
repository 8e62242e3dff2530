#!/usr/bin/env python3
"""Summary of experiments/heldout_eval.sh (and linalg_eval.sh): per device count and T,
over graphs and seeds,
each method's step over the better (per graph and seed) of anneal and descent given the same
T: the geometric mean, the largest, and how many runs are above 1.02.
Usage: summarize_heldout_eval.py OUT_DIR   (prints a Markdown table)"""
import csv
import glob
import math
import os
import re
import sys
from collections import defaultdict


def main():
    out = sys.argv[1]
    ratios = defaultdict(list)  # (D, T, method) -> ratios
    for base in sorted(glob.glob(os.path.join(out, "d*_t*_s*.csv"))):
        m = re.search(r"d(\d+)_t(\d+)_s(\d+)(?:_(\w+))?\.csv$", base)
        if not m or m.group(4):
            continue
        d, t = int(m.group(1)), int(m.group(2))
        rows = defaultdict(dict)
        for path in [base] + glob.glob(base[:-4] + "_*.csv"):
            tag = re.search(r"_s\d+(?:_(\w+))?\.csv$", path).group(1)
            with open(path) as f:
                for r in csv.DictReader(f):
                    name = r["method"] + (f" ({tag})" if tag else "")
                    rows[r["graph"]][name] = float(r["runtime_us"])
        for g, v in rows.items():
            ref = min(v["anneal"], v["descent"])
            for name, x in v.items():
                if name in ("anneal", "descent") or name.startswith("best-classical"):
                    continue
                ratios[(d, t, name)].append(x / ref)
    print("| D | T (ms) | method | runs | geomean / better of anneal, descent | max | runs > 1.02 |")
    print("|---|---|---|---|---|---|---|")
    for (d, t, name) in sorted(ratios):
        r = ratios[(d, t, name)]
        g = math.exp(sum(map(math.log, r)) / len(r))
        print(f"| {d} | {t} | {name} | {len(r)} | {g:.3f} | {max(r):.3f} | {sum(x > 1.02 for x in r)} |")


if __name__ == "__main__":
    main()
