#!/usr/bin/env python3
"""Start-up time of `placeto` commands against a yardstick (docs/PERFORMANCE.md, issue #36).

Runs each command and the yardstick (default: /usr/bin/python3 -c pass) in turn, N pairs
interleaved (A B A B ...), so that a drift of the machine's speed hits both alike, and prints
per command the median wall time of each and the median of the per-pair ratios.

Usage: experiments/startup_bench.py BIN_DIR [--pairs 15] [--graph G --placement P]
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time


def wall(cmd):
    t = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - t


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("bin_dir")
    ap.add_argument("--pairs", type=int, default=15)
    ap.add_argument("--yardstick", default="/usr/bin/python3 -c pass")
    args = ap.parse_args()
    placeto = os.path.join(args.bin_dir, "placeto")
    tmp = tempfile.mkdtemp()
    # A 40-op graph and a placement: case_009 of the simulator's reference vectors.
    import json
    here = os.path.dirname(os.path.abspath(__file__))
    case = json.load(open(os.path.join(here, "..", "tests", "data", "sim_vectors", "case_009.json")))
    json.dump(case["graph"], open(os.path.join(tmp, "g.json"), "w"))
    json.dump({"devices": case["devices"], "placement": case["placement"]},
              open(os.path.join(tmp, "p.json"), "w"))
    commands = {
        "placeto --help": [placeto, "--help"],
        "placeto sim (%d ops)" % len(case["graph"]["nodes"]):
            [placeto, "sim", "--graph", os.path.join(tmp, "g.json"), "--placement",
             os.path.join(tmp, "p.json")],
    }
    yard = args.yardstick.split()
    for c in list(commands.values()) + [yard]:
        wall(c)  # warm the page cache
    print("%-28s %12s %12s %14s" % ("command", "median ms", "yardstick ms", "median ratio"))
    for name, cmd in commands.items():
        a, b = [], []
        for _ in range(args.pairs):
            a.append(wall(cmd))
            b.append(wall(yard))
        ratio = statistics.median(x / y for x, y in zip(a, b))
        print("%-28s %12.1f %12.1f %14.3f" % (name, 1e3 * statistics.median(a),
                                              1e3 * statistics.median(b), ratio))
    print("(yardstick: %s; %d interleaved pairs each)" % (args.yardstick, args.pairs))


if __name__ == "__main__":
    sys.exit(main())
