#!/usr/bin/python3
"""The table of experiments/rl_after_imitation.sh: imitation alone against RL after it.

    /usr/bin/python3 experiments/summarize_rl_after_imitation.py OUT SEED... > summary.md

Reads OUT/s<seed>/eval_imitation.csv and OUT/s<seed>/eval_rl.csv (placeto eval reports of the
hand-over checkpoint and the final one, on the same test graphs with the same seed).  Ratios
are runtime / best classical placer, geometric means over the graphs; "RL / imitation" is the
ratio of the two checkpoints' geometric means, below 1 when RL made the policy better.
"""
import csv
import math
import os
import sys

METHODS = [("policy-greedy", "greedy"), ("policy-best-of-8", "best of 8")]


def gm(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def read(path):
    """method -> {graph: (ratio to best classical, place ms)}"""
    out = {}
    if not os.path.isfile(path):
        sys.exit("%s: No such file (run experiments/rl_after_imitation.sh first)" % path)
    with open(path) as f:
        for row in csv.DictReader(f):
            if row["feasible"] != "true":
                continue
            out.setdefault(row["method"], {})[row["graph"]] = (
                float(row["ratio_to_best_classical"]), float(row["place_ms"]))
    return out


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: summarize_rl_after_imitation.py OUT SEED...")
    out, seeds = sys.argv[1], sys.argv[2:]
    print("| seed | policy | imitation vs best classical | RL after imitation | RL / imitation | place ms (RL) |")
    print("| --- | --- | --- | --- | --- | --- |")
    better = {m: 0 for m, _ in METHODS}
    ratios = {m: [] for m, _ in METHODS}
    for s in seeds:
        imi = read(os.path.join(out, "s" + s, "eval_imitation.csv"))
        rl = read(os.path.join(out, "s" + s, "eval_rl.csv"))
        for m, label in METHODS:
            graphs = sorted(set(imi.get(m, {})) & set(rl.get(m, {})))
            if not graphs:
                sys.exit("%s: no feasible %s rows in both reports of seed %s" % (out, m, s))
            a = gm([imi[m][g][0] for g in graphs])
            b = gm([rl[m][g][0] for g in graphs])
            ms = sorted(rl[m][g][1] for g in graphs)[len(graphs) // 2]
            ratios[m].append(b / a)
            better[m] += b < a
            print("| %s | %s | %.3f | %.3f | %.3f | %.0f |" % (s, label, a, b, b / a, ms))
    for m, label in METHODS:
        print("\n%s: RL after imitation better on %d of %d seeds; RL / imitation %.3f (geometric mean)"
              % (label, better[m], len(seeds), gm(ratios[m])), end="")
    print()


if __name__ == "__main__":
    main()
