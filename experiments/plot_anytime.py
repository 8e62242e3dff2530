#!/usr/bin/env python3
"""Anytime curves of experiments/heldout_eval.sh runs made with several TIMES (issue #35 item
5): for each held-out set (a row) and device count (a column), each method's step against its
placement time, as the geometric mean over graphs of the step over the better of anneal and
descent given the longest T of that set (so every curve shares one reference and lower is
better).  Search seed 1 (the runs of the other seeds are at one T only).

Usage: plot_anytime.py --png FIG.png [--md TABLE.md] NAME=OUT_DIR [NAME=OUT_DIR ...]"""
import argparse
import glob
import math
import os
import re
from collections import defaultdict

import plotlib

STYLES = {
    "anneal": dict(color="tab:blue", marker="o"),
    "descent": dict(color="tab:orange", marker="s"),
    "auto (no model)": dict(color="tab:grey", marker="^", linestyle="--"),
    "auto (default)": dict(color="tab:green", marker="^"),
    "policy-search (default)": dict(color="tab:red", marker="v"),
}


def load(out):
    """{(D, T): {graph: {method: (runtime, place_ms)}}} for search seed 1."""
    runs = defaultdict(lambda: defaultdict(dict))
    for path in glob.glob(os.path.join(out, "d*_t*_s1*.csv")):
        m = re.search(r"d(\d+)_t(\d+)_s1(?:_(\w+))?\.csv$", path)
        if not m:
            continue
        d, t, tag = int(m.group(1)), int(m.group(2)), m.group(3)
        for row in plotlib.read_csv(path, ["graph", "method", "runtime_us", "place_ms"]):
            method = row["method"]
            if method == "best-classical":
                continue
            if method == "auto" and not tag:
                method = "auto (no model)"
            elif tag:
                method = f"{method} ({tag})"
            runs[(d, t)][row["graph"]][method] = (
                plotlib.number(path, row, "runtime_us"), plotlib.number(path, row, "place_ms"))
    return runs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--png", required=True)
    ap.add_argument("--md")
    ap.add_argument("sets", nargs="+")
    a = ap.parse_args()
    sets = [plotlib.label_arg(s, "NAME=OUT_DIR") for s in a.sets]
    data = {name: load(out) for name, out in sets}
    devices = sorted({d for runs in data.values() for (d, _) in runs})
    table = []

    def series(name, d):
        runs = data[name]
        times = sorted(t for (dd, t) in runs if dd == d)
        if not times:
            return []
        longest = runs[(d, times[-1])]
        ref = {g: min(v["anneal"][0], v["descent"][0]) for g, v in longest.items()
               if "anneal" in v and "descent" in v}
        methods = sorted({m for t in times for v in runs[(d, t)].values() for m in v})
        out = []
        for m in methods:
            xs, ys = [], []
            for t in times:
                r = [v[m][0] / ref[g] for g, v in runs[(d, t)].items() if m in v and g in ref]
                ms = [v[m][1] for g, v in runs[(d, t)].items() if m in v and g in ref]
                if r:
                    xs.append(sum(ms) / len(ms))
                    ys.append(math.exp(sum(map(math.log, r)) / len(r)))
                    table.append([name, d, t, m, len(r), f"{ys[-1]:.3f}", f"{xs[-1]:.0f}"])
            out.append((m, xs, ys, STYLES.get(m, {})))
        return out

    plotlib.anytime_grid([n for n, _ in sets], devices, series, a.png,
                         ylabel="step / better search at longest T")
    if a.md:
        with open(a.md, "w") as f:
            f.write(plotlib.markdown_table(
                ["set", "D", "T (ms)", "method", "graphs", "geomean step / reference",
                 "place ms (mean)"], table))


if __name__ == "__main__":
    plotlib.run_main(main)
