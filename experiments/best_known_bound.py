#!/usr/bin/env python3
"""How low issue #35's first ratio could go at all on a report set (RESULTS.md section 15).

For every graph, the shortest feasible step that any method reached in any of the given
heldout_eval.sh output directories (d<D>_t<T>_s<seed>[_<model>].csv: best, anneal, descent,
auto and policy-search, every seed and every run); then, for every run of the bar (a
d<D>_t<T>_s<seed>.csv with anneal and descent), that best-known step over the better of anneal
and descent in that run.  An `auto` that returned the best placement ever seen for the graph
would score that ratio; its geometric mean is a floor for `auto`'s own on these runs.

Usage: experiments/best_known_bound.py [--time-ms 1000] DIR [DIR ...]
Prints a Markdown table: D, runs, placements a graph (median), geometric mean, lowest run.
"""
import argparse
import collections
import csv
import glob
import math
import os
import re
import statistics
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--time-ms", type=int, default=1000)
    ap.add_argument("dirs", nargs="+")
    a = ap.parse_args()
    rows_by_d = collections.defaultdict(list)
    for d in a.dirs:
        if not os.path.isdir(d):
            sys.exit("best_known_bound.py: %s: not a directory" % d)
        for path in glob.glob(os.path.join(d, "d*_t%d_s*.csv" % a.time_ms)):
            m = re.match(r"d(\d+)_t\d+_s(\d+)(_.+)?\.csv$", os.path.basename(path))
            if not m:
                continue
            with open(path) as f:
                for r in csv.DictReader(f):
                    rows_by_d[int(m.group(1))].append((path, m.group(3) is None, r))
    if not rows_by_d:
        sys.exit("best_known_bound.py: no d<D>_t%d_s<seed>*.csv under %s" % (a.time_ms, a.dirs))
    print("| D | runs of the bar | placements a graph (median) | best known / better of anneal and descent: geometric mean | lowest run |")
    print("|---|---|---|---|---|")
    for dev in sorted(rows_by_d):
        best = collections.defaultdict(lambda: math.inf)
        count = collections.Counter()
        bar = collections.defaultdict(lambda: math.inf)  # (path, graph) -> better of the two
        for path, is_base, r in rows_by_d[dev]:
            if r["method"] == "best-classical" or r.get("feasible", "true") != "true":
                continue
            v = float(r["runtime_us"])
            best[r["graph"]] = min(best[r["graph"]], v)
            count[r["graph"]] += 1
            if is_base and r["method"] in ("anneal", "descent"):
                bar[(path, r["graph"])] = min(bar[(path, r["graph"])], v)
        ratios = [best[g] / b for (_, g), b in bar.items()]
        if not ratios:
            continue
        gm = math.exp(sum(map(math.log, ratios)) / len(ratios))
        print("| %d | %d | %d | %.3f | %.3f |" % (dev, len(ratios), statistics.median(count.values()), gm, min(ratios)))


if __name__ == "__main__":
    main()
