#!/usr/bin/env python3
"""Summary of experiments/auto_tune.sh: per device count, family and descent_share, auto's
step over the better of anneal and descent at the same budget (geometric mean over graphs,
the largest, and how many are above 1.02), as a Markdown table.
Usage: summarize_auto_tune.py OUT_DIR"""
import csv
import glob
import math
import re
import sys
from collections import defaultdict


def main():
    out = sys.argv[1]
    base = {}
    for f in glob.glob(out + "/base_d*_*.csv"):
        d, fam = re.search(r"base_d(\d+)_(\w+)\.csv", f).groups()
        for r in csv.DictReader(open(f)):
            base.setdefault((d, fam, r["graph"]), {})[r["method"]] = float(r["runtime_us"])
    res = defaultdict(list)
    for f in glob.glob(out + "/auto*_d*_*.csv"):
        sh, d, fam = re.search(r"auto([\d.]+)_d(\d+)_(\w+)\.csv", f).groups()
        for r in csv.DictReader(open(f)):
            if r["method"] != "auto":
                continue
            b = base[(d, fam, r["graph"])]
            x = float(r["runtime_us"]) / min(b["anneal"], b["descent"])
            res[(d, fam, sh)].append(x)
            res[(d, "all", sh)].append(x)
    shares = ("0", "0.25", "0.5")
    print("| D | graphs | " + " | ".join("descent_share " + s for s in shares) + " |")
    print("|---|---|" + "---|" * len(shares))
    for d in ("4", "8", "16"):
        for fam in ("linalg", "ptb", "nmt", "cifar10", "layered", "all"):
            cells = []
            for sh in shares:
                v = res.get((d, fam, sh))
                if not v:
                    cells.append("-")
                    continue
                g = math.exp(sum(map(math.log, v)) / len(v))
                cells.append(f"{g:.3f} (max {max(v):.3f}, {sum(x > 1.02 for x in v)} > 1.02)")
            print(f"| {d} | {fam} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
