#!/usr/bin/env python3
"""Summarizes experiments/move_kinds.sh: per device count and family, the geometric mean over
graphs and seeds of each setting's step over the single-op search's (lower is better)."""
import csv
import glob
import math
import os
import re
import sys
from collections import defaultdict


def main():
    out = sys.argv[1]
    runs = {}  # (setting, d, seed, family, graph) -> runtime
    for path in glob.glob(os.path.join(out, "*_d*_s*_*.csv")):
        m = re.match(r"(\w+?)_d(\d+)_s(\d+)_(\w+)\.csv$", os.path.basename(path))
        if not m:
            continue
        name, d, s, fam = m.group(1), int(m.group(2)), int(m.group(3)), m.group(4)
        with open(path) as f:
            for row in csv.DictReader(f):
                if row["method"] == "policy-search":
                    runs[(name, d, s, fam, row["graph"])] = float(row["runtime_us"])
    ratios = defaultdict(list)
    for (name, d, s, fam, g), r in runs.items():
        base = runs.get(("single", d, s, fam, g))
        if base and name != "single":
            ratios[(d, fam, name)].append(r / base)
            ratios[(d, "all", name)].append(r / base)
    names = ["group", "segment", "swap", "mixed"]
    fams = ["linalg", "ptb", "nmt", "cifar10", "layered", "all"]
    print("| D | family | " + " | ".join(names) + " |")
    print("|---|---|" + "---|" * len(names))
    for d in sorted({k[0] for k in ratios}):
        for fam in fams:
            cells = []
            for n in names:
                v = ratios.get((d, fam, n))
                cells.append(f"{math.exp(sum(map(math.log, v)) / len(v)):.3f} ({len(v)})" if v else "-")
            print(f"| {d} | {fam} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
