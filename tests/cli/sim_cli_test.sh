#!/usr/bin/env bash
# End-to-end test of `placeto sim`: every reference vector through the real executable, a
# Chrome trace that parses, --repeat, and clear errors with a non-zero exit on bad input.
set -euo pipefail
# shellcheck source=SCRIPTDIR/../lib.sh
source "$(dirname "$0")/../lib.sh"
data=$2
fail() { echo "FAIL: $*" >&2; exit 1; }

# Split each vector into the graph and placement files a user would have.
python3 - "$data/sim_vectors" "$tmp" <<'PY'
import json, os, sys
src, out = sys.argv[1], sys.argv[2]
for f in sorted(os.listdir(src)):
    case = json.load(open(os.path.join(src, f)))
    base = os.path.join(out, f[:-5])
    json.dump(case["graph"], open(base + ".graph.json", "w"))
    json.dump({"devices": case["devices"], "placement": case["placement"]}, open(base + ".placement.json", "w"))
    json.dump(case["expected"], open(base + ".expected.json", "w"))
PY

n=0
for g in "$tmp"/*.graph.json; do
  base=${g%.graph.json}
  "$bin/placeto" sim --graph "$g" --placement "$base.placement.json" > "$base.out.json"
  python3 - "$base.out.json" "$base.expected.json" <<'PY' || fail "mismatch on $base"
import json, sys
got, want = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
rel = lambda a, b: abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))
assert rel(got["runtime_us"], want["runtime_us"]), (got["runtime_us"], want["runtime_us"])
assert all(rel(a, b) for a, b in zip(got["peak_mem_bytes"], want["peak_mem_bytes"]))
PY
  n=$((n + 1))
done
[ "$n" -eq 30 ] || fail "expected 30 vectors, ran $n"

# Trace and repeat.
g="$tmp/case_007.graph.json"; p="$tmp/case_007.placement.json"
"$bin/placeto" sim --graph "$g" --placement "$p" --trace "$tmp/trace.json" --repeat 50 > "$tmp/out.json"
python3 - "$tmp/trace.json" "$tmp/out.json" <<'PY' || fail "bad trace or repeat output"
import json, sys
t = json.load(open(sys.argv[1]))
ev = t["traceEvents"]
ops = [e for e in ev if e.get("ph") == "X" and e.get("cat") == "op"]
xfers = [e for e in ev if e.get("ph") == "X" and e.get("cat") == "transfer"]
assert len(ops) == 150, len(ops)
assert xfers and all(e["dur"] >= 0 and "pid" in e and "tid" in e for e in ops + xfers)
out = json.load(open(sys.argv[2]))
assert out["repeat"] == 50 and out["sim_us"] > 0
PY

# Cluster file with a memory capacity.
cat > "$tmp/cluster.yaml" <<'Y'
name: tiny
devices: 7
memory_bytes: 1000
Y
"$bin/placeto" sim --graph "$g" --placement "$p" --cluster "$tmp/cluster.yaml" > "$tmp/out2.json"
grep -q '"memory_ok":false' "$tmp/out2.json" || fail "capacity not reported"

# Bad inputs: non-zero exit and a message naming the file and the field.
expect_error() {  # expect_error PATTERN args...
  local pattern=$1; shift
  if "$bin/placeto" "$@" > "$tmp/stdout" 2> "$tmp/stderr"; then fail "no error for: $*"; fi
  grep -q -- "$pattern" "$tmp/stderr" || { cat "$tmp/stderr"; fail "message lacks '$pattern'"; }
}
printf '{"nodes": [' > "$tmp/trunc.json"
expect_error "trunc.json: not valid JSON" sim --graph "$tmp/trunc.json" --placement "$p"
echo '{"nodes":[{"name":"a","cost_us":1}],"edges":[{"src":"a","dst":"b"}]}' > "$tmp/unknown.json"
expect_error 'unknown.json: edges\[0\] (a -> b).dst: unknown node "b"' sim --graph "$tmp/unknown.json" --placement "$p"
expect_error "missing.json: cannot open file" sim --graph "$tmp/missing.json" --placement "$p"
echo '{"devices": 7, "placement": {}}' > "$tmp/empty_p.json"
expect_error "empty_p.json: placement" sim --graph "$g" --placement "$tmp/empty_p.json"
printf 'devics: 4\n' > "$tmp/bad.yaml"
expect_error "bad.yaml: devics: unknown key (did you mean 'devices'?)" sim --graph "$g" --placement "$p" --cluster "$tmp/bad.yaml"
expect_error "contradicts" sim --graph "$g" --placement "$p" --cluster "$tmp/cluster.yaml" --devices 3
echo "sim_cli_test: 30 vectors, trace, repeat, cluster and 6 error cases passed"
