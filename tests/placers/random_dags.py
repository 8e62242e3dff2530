#!/usr/bin/env python3
"""Writes a directory of random layered DAGs (placeto-graph JSON) for trying `placeto compare`
by hand; docs/PERFORMANCE.md ("Placers") quotes a comparison over its default output.
Costs are log-uniform in [10, 1000] us and tensors in [1e3, 1e7] bytes, as in
tests/placers/random_dag.h (which the tests use; this script is for people).

usage: random_dags.py OUT_DIR
"""
import json
import math
import os
import random
import sys

SIZES = [(100, 4), (200, 8), (500, 10), (500, 20), (300, 6), (1000, 16), (150, 3), (400, 12)]


def log_uniform(rnd, lo, hi):
    return math.exp(math.log(lo) + rnd.random() * (math.log(hi) - math.log(lo)))


def graph(k, n, width):
    rnd = random.Random(k)
    nodes, edges = [], []
    for i in range(n):
        nodes.append({"name": f"op{i}", "op": "Op", "cost_us": round(log_uniform(rnd, 10, 1000)),
                      "out_bytes": [int(log_uniform(rnd, 1e3, 1e7))]})
        layer = i // width
        if layer == 0:
            continue
        parents = set()
        for _ in range(rnd.randint(1, 3)):
            src_layer = rnd.randint(0, layer - 1) if rnd.random() < 0.25 else layer - 1
            parents.add(src_layer * width + rnd.randint(0, width - 1))
        edges += [{"src": f"op{p}", "dst": f"op{i}"} for p in sorted(parents)]
    return {"format": "placeto-graph", "version": 1, "name": f"g{k}", "nodes": nodes,
            "edges": edges}


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    os.makedirs(sys.argv[1], exist_ok=True)
    for k, (n, width) in enumerate(SIZES):
        with open(os.path.join(sys.argv[1], f"g{k}.json"), "w") as f:
            json.dump(graph(k, n, width), f)


if __name__ == "__main__":
    main()
