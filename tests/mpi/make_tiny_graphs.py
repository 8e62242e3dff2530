#!/usr/bin/env python3
"""Writes N small random layered DAGs (placeto-graph JSON) for fast trainer tests."""
import json, random, sys

out, count, nodes, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
rng = random.Random(seed)
for g in range(count):
    ns = [{"name": f"op{i:03d}", "cost_us": rng.uniform(20, 400),
           "out_bytes": [rng.randint(1000, 2000000)]} for i in range(nodes)]
    edges, seen = [], set()
    for i in range(1, nodes):
        for _ in range(rng.randint(1, 2)):
            j = rng.randint(max(0, i - 6), i - 1)
            if (j, i) not in seen:
                seen.add((j, i))
                edges.append({"src": f"op{j:03d}", "dst": f"op{i:03d}"})
    json.dump({"format": "placeto-graph", "version": 1, "name": f"tiny_{g}", "nodes": ns,
               "edges": edges}, open(f"{out}/tiny_{g}.json", "w"))
