#!/usr/bin/env bash
# `placeto compare` over a generated family (the paper's setting): every graph gets a row per
# method, the best-classical row, and any loss to `single` is flagged, not hidden.
set -euo pipefail
# shellcheck source=SCRIPTDIR/../lib.sh
source "$(dirname "$0")/../lib.sh"
"$bin/placeto" generate --family ptb --count 4 --seed 3 --out "$tmp/fam" --test 1 \
  --steps 3 --layers 1 --cell-nodes 4 > /dev/null
"$bin/placeto" compare --graphs "$tmp/fam" --devices 3 --out "$tmp/report.csv" \
  --methods single,round-robin,expert,metis,heft,m-etf,m-sct > "$tmp/table.txt" 2>&1
"$py" - "$tmp/report.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
graphs = sorted({r["graph"] for r in rows})
assert len(graphs) == 4, graphs
for g in graphs:
    methods = {r["method"] for r in rows if r["graph"] == g}
    for m in ("single", "round-robin", "expert", "metis", "heft", "m-etf", "m-sct", "best-classical"):
        assert m in methods, (g, m, methods)
    single = next(float(r["runtime_us"]) for r in rows if r["graph"] == g and r["method"] == "single")
    for r in rows:
        if r["graph"] == g and r["method"] not in ("best-classical",):
            loses = float(r["runtime_us"]) > single
            assert (r["loses_to_single"] in ("true", "1")) == loses, r
print("compare over a generated family: %d graphs, %d rows" % (len(graphs), len(rows)))
PY
grep -q "vs lower bd" "$tmp/table.txt" && grep -q "^best-classical" "$tmp/table.txt" || { cat "$tmp/table.txt"; exit 1; }
echo "compare_family_test: 1 passed, 0 failed"
