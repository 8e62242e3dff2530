#!/usr/bin/env bash
# Hostile inputs, through the real executables: every file format the project reads (graphs,
# placements, cluster YAML, training configs, family manifests, checkpoints, ONNX) and every
# kind of output path a user can get wrong.  Each case must
#   - exit with status 2 (bad input), not crash, hang or exit 0,
#   - print a message that names the file (or option) and the culprit,
#   - leave every file it was given, and every output path, exactly as it was.
# Usage: hostile_inputs_test.sh BIN_DIR SOURCE_DIR
set -uo pipefail
# shellcheck source=SCRIPTDIR/../lib.sh
source "$(dirname "$0")/../lib.sh"
in=$tmp/in    # every input file of the cases; checked unchanged after each case
out=$tmp/out  # pre-existing outputs (files, links, FIFOs); checked unchanged too
mkdir -p "$in" "$out"

# A fingerprint of everything a case could damage: names, types, link targets and contents
# of $in and $out, and the device node /dev/full.
fingerprint() {
  (cd "$tmp" && find in out -printf '%p %y %l\n' | sort &&
    find in out -type f -print0 | sort -z | xargs -0 -r sha256sum)
  stat -c '%n %F' /dev/full
}

# refused NAME 'TEXT1' ['TEXT2'...] -- COMMAND...: exit 2, every TEXT in the message (fixed
# strings), nothing changed.
refused() {
  local name=$1
  shift
  local texts=()
  while [[ $1 != -- ]]; do texts+=("$1"); shift; done
  shift
  local before after rc
  before=$(fingerprint)
  timeout 120 "$@" > "$tmp/stdout" 2> "$tmp/stderr" < /dev/null
  rc=$?
  after=$(fingerprint)
  if ((rc != 2)); then
    bad "$name: exit $rc, expected 2"
    tail -5 "$tmp/stderr"
    return
  fi
  for t in "${texts[@]}"; do
    if ! grep -qF -- "$t" "$tmp/stderr"; then
      bad "$name: the message lacks '$t':"
      cat "$tmp/stderr"
      return
    fi
  done
  if [[ $before != "$after" ]]; then
    bad "$name: files changed:"
    diff <(echo "$before") <(echo "$after") | head
    return
  fi
  ok
  echo "ok: $name: $(head -c 300 "$tmp/stderr" | tail -n 1)"
}

placeto=$bin/placeto

# ---------------------------------------------------------------------------------------------
# A valid graph and placement to build the hostile ones from.
cat > "$in/g.json" << 'EOF'
{"name": "tiny", "nodes": [{"name": "a", "cost_us": 5, "out_bytes": [100]},
                           {"name": "b", "cost_us": 7, "out_bytes": [10]}],
 "edges": [{"src": "a", "dst": "b"}]}
EOF
echo '{"devices": 2, "placement": {"a": 0, "b": 1}}' > "$in/p.json"
$placeto sim --graph "$in/g.json" --placement "$in/p.json" > /dev/null || {
  echo "the valid graph does not simulate"
  exit 1
}
# Short commands for the cases (scripts, so that `timeout` can run them).
mkdir -p "$tmp/bin"
printf '#!/bin/sh\nexec "%s" sim --graph "$@"\n' "$placeto" > "$tmp/bin/sim"
printf '#!/bin/sh\nexec "%s" place --graph "%s" --devices 2 --method single "$@"\n' "$placeto" \
  "$in/g.json" > "$tmp/bin/place"
chmod +x "$tmp/bin/sim" "$tmp/bin/place"
PATH=$tmp/bin:$PATH
graph_case() {  # graph_case NAME FILE_CONTENT TEXT...
  local name=$1 content=$2
  shift 2
  printf '%s' "$content" > "$in/$name.json"
  refused "graph $name" "$in/$name.json" "$@" -- sim "$in/$name.json" --placement "$in/p.json"
}

# Graphs: literals JSON does not have, numbers whose sums overflow, nesting, bad structure.
graph_case nan '{"nodes":[{"name":"a","cost_us":NaN}],"edges":[]}' "not valid JSON"
graph_case infinity '{"nodes":[{"name":"a","cost_us":Infinity}],"edges":[]}' "not valid JSON"
graph_case overflow_literal '{"nodes":[{"name":"a","cost_us":1e999}],"edges":[]}' "not valid JSON"
graph_case huge_cost '{"nodes":[{"name":"a","cost_us":1e308},{"name":"b","cost_us":1e308}],"edges":[]}' \
  'nodes[0] "a".cost_us' "1e12"
graph_case negative_cost '{"nodes":[{"name":"neg_op","cost_us":-5}]}' 'nodes[0] "neg_op".cost_us: must be >= 0'
graph_case huge_bytes '{"nodes":[{"name":"a","cost_us":1,"out_bytes":[9000000000000000000]}]}' \
  'nodes[0] "a".out_bytes[0]' "2^50"
graph_case float_bytes '{"nodes":[{"name":"a","cost_us":1,"out_bytes":[1.5]}]}' \
  'nodes[0] "a".out_bytes[0]' "expected an integer"
graph_case self_loop '{"nodes":[{"name":"a","cost_us":1},{"name":"b","cost_us":1}],"edges":[{"src":"a","dst":"a"}]}' \
  "edges[0]" 'self-loop on op "a"'
graph_case cycle '{"nodes":[{"name":"a","cost_us":1},{"name":"b","cost_us":1}],"edges":[{"src":"a","dst":"b"},{"src":"b","dst":"a"}]}' \
  "cycle through op"
graph_case duplicate '{"nodes":[{"name":"a","cost_us":1},{"name":"a","cost_us":2}]}' \
  'nodes[1] "a".name' "duplicate node name"
graph_case not_object '[1, 2, 3]' "(document): expected an object"
graph_case nodes_not_array '{"nodes": {"a": 1}}' "nodes: expected an array"
graph_case empty '' "not valid JSON"
graph_case trailing '{"nodes":[]} {"nodes":[]}' "not valid JSON"
graph_case bad_utf8 "{\"nodes\":[{\"name\":\"a$(printf '\xff\xfe')\",\"cost_us\":1}]}" "not valid JSON"
# A name with a quote, a newline (escaped in the JSON) and non-ASCII letters: the message
# names it on one line, escaped.
graph_case odd_name '{"nodes":[{"name":"enc/\"q\"\nlayer_é","cost_us":-1}]}' \
  'nodes[0] "enc/\"q\"\nlayer_é".cost_us'
# 200,000 nested brackets: refused before parsing (this once overflowed the stack).
/usr/bin/python3 -c 'print("[" * 200000 + "]" * 200000)' > "$in/deep.json"
refused "graph deep nesting" "$in/deep.json" "nest deeper than 64" -- sim "$in/deep.json" --placement "$in/p.json"
/usr/bin/python3 -c 'print("{\"a\":" * 200000 + "1" + "}" * 200000)' > "$in/deep_obj.json"
refused "graph deep objects" "$in/deep_obj.json" "nest deeper than 64" -- sim "$in/deep_obj.json" --placement "$in/p.json"
# 10^6 ops: read within a 3 GiB address-space bound; one bad op at the end is named.
/usr/bin/python3 - "$in/big.json" << 'PY'
import sys
n = 1000000
with open(sys.argv[1], "w") as f:
    f.write('{"nodes":[')
    f.write(",".join('{"name":"op%d","cost_us":1,"out_bytes":[8]}' % i for i in range(n - 1)))
    f.write(',{"name":"last_op","cost_us":-1}],"edges":[]}')
PY
refused "graph of 10^6 ops, bounded memory" "$in/big.json" 'nodes[999999] "last_op".cost_us' -- \
  bash -c 'ulimit -v 3145728; exec "$0" place --graph "$1" --devices 2 --method single --out "$2"' \
  "$placeto" "$in/big.json" "$out/big_placement.json"

# ---------------------------------------------------------------------------------------------
# Placements.
placement_case() {  # placement_case NAME CONTENT TEXT...
  local name=$1 content=$2
  shift 2
  printf '%s' "$content" > "$in/p_$name.json"
  refused "placement $name" "$in/p_$name.json" "$@" -- sim "$in/g.json" --placement "$in/p_$name.json"
}
placement_case float_device '{"devices":2,"placement":{"a":0.5,"b":1}}' 'placement."a"' "expected an integer"
placement_case negative_device '{"devices":2,"placement":{"a":-1,"b":1}}' 'placement."a"' "out of range"
placement_case device_past_end '{"devices":2,"placement":{"a":0,"b":2}}' 'placement."b"' "out of range"
placement_case other_graph '{"devices":2,"placement":{"conv1":0,"fc":1}}' 'placement."conv1"' "another graph"
placement_case missing_op '{"devices":2,"placement":{"a":0}}' 'placement."b"' "not placed"
placement_case zero_devices '{"devices":0,"placement":{"a":0,"b":0}}' "devices" "must be in [1, 4096]"
# A placement for more devices than the cluster has.
printf '{"devices": 4, "placement": {"a": 3, "b": 0}}' > "$in/p_four.json"
printf 'devices: 2\n' > "$in/c_two.yaml"
refused "placement past the cluster" "$in/p_four.json" "devices" "4 devices but the cluster has 2" -- \
  sim "$in/g.json" --placement "$in/p_four.json" --cluster "$in/c_two.yaml"
refused "initial placement past the cluster" "$in/p_four.json" "devices" "4 devices but the cluster has 2" -- \
  "$placeto" place --graph "$in/g.json" --method anneal --initial "$in/p_four.json" \
  --cluster "$in/c_two.yaml" --out "$tmp/never.json"
placement_case string_device '{"devices":2,"placement":{"a":"gpu0","b":1}}' 'placement."a"' "expected an integer"

# ---------------------------------------------------------------------------------------------
# Cluster files.
cluster_case() {  # cluster_case NAME CONTENT TEXT...
  local name=$1 content=$2
  shift 2
  printf '%s' "$content" > "$in/c_$name.yaml"
  refused "cluster $name" "$in/c_$name.yaml" "$@" -- \
    sim "$in/g.json" --placement "$in/p.json" --cluster "$in/c_$name.yaml"
}
cluster_case zero_devices 'devices: 0' "devices" "must be in [1, 1024]"
link() { printf 'mode: heterogeneous\ndevices: 2\nlinks:\n  - {src: %s, dst: %s, gbytes_per_s: %s}\n' "$@"; }
cluster_case negative_bandwidth "$(link 0 1 -3)" "links[0].gbytes_per_s" "must be > 0"
cluster_case nan_bandwidth "$(link 0 1 .nan)" "links[0].gbytes_per_s" "finite"
cluster_case infinite_bandwidth "$(link 0 1 .inf)" "links[0].gbytes_per_s" "finite"
# The cluster's link table sized for other devices than it has.
cluster_case link_past_end "$(link 0 5 10)" "links[0].dst" "out of range"
cluster_case link_to_itself "$(link 1 1 10)" "links[0].dst" "two different devices"
cluster_case links_not_list $'mode: heterogeneous\ndevices: 2\nlinks: {bandwidth: [[1, 2, 3], [4, 5, 6]]}\n' \
  "links" "expected a list"
cluster_case nan_memory $'devices:\n  - {memory_bytes: .nan}\n' "devices[0].memory_bytes" "finite"
# Capacities: NaN, infinite, negative or above 2^62 bytes name the file, the field and the value.
cluster_case inf_memory $'devices:\n  - {memory_bytes: .inf}\n' "c_inf_memory.yaml" "devices[0].memory_bytes" "finite" ".inf"
cluster_case negative_memory $'devices:\n  - {memory_bytes: -5}\n' "c_negative_memory.yaml" "devices[0].memory_bytes" "-5"
cluster_case negative_default_memory $'devices: 2\nmemory_bytes: -1e9\n' "c_negative_default_memory.yaml" "memory_bytes" "-1e9"
cluster_case huge_memory $'devices:\n  - {memory_bytes: 4.7e18}\n' "c_huge_memory.yaml" "devices[0].memory_bytes" "2^62" "4.7e18"
cluster_case many_devices 'devices: 1000000' "devices" "must be in [1, 1024]"
cluster_case not_mapping '[1, 2]' "must be a mapping"
cluster_case unknown_key $'devices: 2\ndevics: 3\n' "devics" "did you mean"
cluster_case deep "$(/usr/bin/python3 -c 'print("devices: " + "[" * 100000 + "]" * 100000)')" "nest deeper than 64"
cluster_case deep_block "$(/usr/bin/python3 -c 'print("devices:\n" + "".join("  " * i + "- \n" for i in range(3000)))')" "c_deep_block.yaml"
# An alias bomb: each level names the one below ten times (10^9 values if expanded).
/usr/bin/python3 - "$in/c_alias_bomb.yaml" << 'PY'
import sys
lines = ['a0: &a0 [x, x, x, x, x, x, x, x, x, x]']
for i in range(1, 10):
    lines.append('a%d: &a%d [%s]' % (i, i, ", ".join(["*a%d" % (i - 1)] * 10)))
lines.append("devices: *a9")
open(sys.argv[1], "w").write("\n".join(lines) + "\n")
PY
refused "cluster alias bomb" "$in/c_alias_bomb.yaml" "alias" -- \
  sim "$in/g.json" --placement "$in/p.json" --cluster "$in/c_alias_bomb.yaml"

# ---------------------------------------------------------------------------------------------
# Training configs (placeto train; nothing may be created in the run directory's place).
if [[ -x $bin/placeto_actor ]]; then
  fam=$in/fam
  $placeto generate --family ptb --count 3 --test 1 --seed 3 --out "$fam" --steps 2 --layers 1 \
    --cell-nodes 3 > /dev/null || { echo "generate failed"; exit 1; }
  config_case() {  # config_case NAME CONTENT TEXT...
    local name=$1 content=$2
    shift 2
    printf '%s' "$content" > "$in/cfg_$name.yaml"
    refused "config $name" "$in/cfg_$name.yaml" "$@" -- \
      $placeto train --config "$in/cfg_$name.yaml" --run-dir "$out/run_$name"
  }
  config_case nan_lr "family_dir: $fam"$'\nlr: .nan\n' "lr" "finite"
  config_case zero_devices "family_dir: $fam"$'\ndevices: 0\n' "devices" "must be in [1, 1024]"
  config_case million_devices "family_dir: $fam"$'\ndevices: 1000000\n' "devices" "must be in [1, 1024]"
  config_case huge_policy "family_dir: $fam"$'\npolicy: {hidden: 1000000}\n' "policy.hidden" "must be in [1, 4096]"
  config_case empty_family_dir $'family_dir: ""\n' "family_dir" "required"
  config_case unknown_key "family_dir: $fam"$'\nlearning_rate: 0.1\n' "learning_rate" "unknown key"
  config_case deep "$(/usr/bin/python3 -c 'print("policy: " + "{a: " * 100000 + "1" + "}" * 100000)')" "nest deeper than 64"

  # Family manifests that name files outside their folder.
  mkdir -p "$in/evil"
  cp "$fam"/*.json "$in/evil/"
  /usr/bin/python3 - "$in/evil/manifest.json" << 'PY'
import json, sys
m = json.load(open(sys.argv[1]))
m["train"][0] = "../../etc/passwd"
json.dump(m, open(sys.argv[1], "w"))
PY
  refused "manifest ../../etc/passwd" "manifest.json" "train[0]" "inside the family's directory" -- \
    $placeto train --config "$src/experiments/configs/quickstart.yaml" --run-dir "$out/run_evil" \
    "family_dir=$in/evil"
  mkdir -p "$in/evil_link"
  cp "$fam"/*.json "$in/evil_link/"
  first=$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["train"][0])' "$in/evil_link/manifest.json")
  ln -sf /etc/passwd "$in/evil_link/$first"
  refused "manifest entry linking outside" "manifest.json" "outside the family's directory" -- \
    $placeto train --config "$src/experiments/configs/quickstart.yaml" --run-dir "$out/run_link" \
    "family_dir=$in/evil_link"

  # Checkpoints: a real one (2 devices) first.
  run=$in/run
  $placeto train --config "$src/experiments/configs/quickstart.yaml" --run-dir "$run" \
    "family_dir=$fam" iterations=1 episodes_per_iteration=2 eval_every=0 devices=2 \
    > "$tmp/train.out" 2>&1 || { cat "$tmp/train.out"; echo "training failed"; exit 1; }
  ckpt=$run/checkpoints/ckpt_1.h5
  head -c 4096 /dev/urandom > "$in/random.h5"
  head -c 3000 "$ckpt" > "$in/truncated.h5"
  refused "checkpoint without its digest" "random.h5" "digest" -- $placeto ckpt-info "$in/random.h5"
  # With digests that match, so that the HDF5 reader itself meets the damaged bytes.
  (cd "$in" && sha256sum random.h5 > random.h5.sha256 && cp truncated.h5 trunc2.h5 &&
    sha256sum trunc2.h5 > trunc2.h5.sha256)
  refused "checkpoint of random bytes" "random.h5" "file signature not found" -- $placeto ckpt-info "$in/random.h5"
  refused "checkpoint truncated" "trunc2.h5" "truncated file" -- $placeto ckpt-info "$in/trunc2.h5"
  refused "checkpoint for another device count" "ckpt_1.h5" "trained for 2 devices" -- \
    $placeto eval --checkpoint "$ckpt" --graphs "$fam" --devices 3 --out "$out/eval.csv"
  refused "eval of a random file" "random.h5" -- \
    $placeto eval --checkpoint "$in/random.h5" --graphs "$fam" --out "$out/eval.csv"
  mkdir -p "$in/run_latest/checkpoints"
  cp "$ckpt" "$ckpt.sha256" "$in/run_latest/checkpoints/"
  echo "../../../etc/passwd" > "$in/run_latest/checkpoints/LATEST"
  refused "LATEST naming a file outside the run" "LATEST" '"../../../etc/passwd"' "not a checkpoint of this directory" -- \
    $placeto eval --checkpoint "$in/run_latest/checkpoints" --graphs "$fam" --out "$out/eval.csv"

  # Two trainers on one run directory: the second is refused and names the holder.
  lockrun=$tmp/lockrun
  $placeto train --config "$src/experiments/configs/quickstart.yaml" --run-dir "$lockrun" \
    "family_dir=$fam" iterations=100000 episodes_per_iteration=2 eval_every=0 devices=2 \
    > "$tmp/first.out" 2>&1 &
  first_pid=$!
  for _ in $(seq 1 300); do [[ -s $lockrun/run.lock ]] && break; sleep 0.1; done
  refused "second trainer on one run directory" "run.lock" "in use by another process" "pid $first_pid" -- \
    env PLACETO_RUN_LOCK_WAIT_S=1 $placeto train --config "$src/experiments/configs/quickstart.yaml" --run-dir "$lockrun" \
    --resume auto "family_dir=$fam" devices=2
  kill -TERM "$first_pid" 2> /dev/null  # (a background job ignores SIGINT)
  wait "$first_pid" 2> /dev/null
  refused "bad PLACETO_RUN_LOCK_WAIT_S" "PLACETO_RUN_LOCK_WAIT_S" '"-1"' -- \
    env PLACETO_RUN_LOCK_WAIT_S=-1 $placeto train --config "$src/experiments/configs/quickstart.yaml" \
    --run-dir "$tmp/lockrun2" "family_dir=$fam" devices=2
  if [[ -e $tmp/lockrun2 ]]; then bad "bad PLACETO_RUN_LOCK_WAIT_S: the run directory was created"; fi
fi

# ---------------------------------------------------------------------------------------------
# ONNX models.
# Debian's python3-onnx (launch/packages.txt) writes the models; without it the cases fail.
{
  /usr/bin/python3 - "$in" << 'PY'
import sys
import onnx
from onnx import TensorProto, helper
d = sys.argv[1]
x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8])
y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8])
w = helper.make_tensor("w", TensorProto.FLOAT, [8, 8], [0.0] * 64)
good = helper.make_model(helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")],
                                           "g", [x], [y], [w]),
                         opset_imports=[helper.make_opsetid("", 17)])
onnx.save(good, d + "/good.onnx")
odd = helper.make_model(helper.make_graph([helper.make_node("FancyCustomOp", ["x"], ["y"], name="fancy")],
                                          "g", [x], [y]),
                        opset_imports=[helper.make_opsetid("", 17)])
onnx.save(odd, d + "/unsupported.onnx")
z = helper.make_tensor_value_info("z", TensorProto.FLOAT, [0, 8])
zw = helper.make_tensor("zw", TensorProto.FLOAT, [8, 0], [])
zero = helper.make_model(helper.make_graph([helper.make_node("MatMul", ["z", "zw"], ["y"], name="mm0")],
                                           "g", [z], [y], [zw]),
                         opset_imports=[helper.make_opsetid("", 17)])
onnx.save(zero, d + "/zero_size.onnx")
PY
  head -c "$(($(stat -c %s "$in/good.onnx") / 2))" "$in/good.onnx" > "$in/truncated.onnx"
  : > "$in/empty.onnx"
  head -c 2048 /dev/urandom > "$in/random.onnx"
  refused "onnx truncated" "truncated.onnx" -- $placeto import "$in/truncated.onnx" --out "$out/o.json"
  refused "onnx empty" "empty.onnx" "empty" -- $placeto import "$in/empty.onnx" --out "$out/o.json"
  refused "onnx random bytes" "random.onnx" -- $placeto import "$in/random.onnx" --out "$out/o.json"
  refused "onnx unsupported op" "unsupported.onnx" "FancyCustomOp" -- \
    $placeto import "$in/unsupported.onnx" --out "$out/o.json"
  refused "onnx zero-size tensor" "zero_size.onnx" -- $placeto import "$in/zero_size.onnx" --out "$out/o.json"
  refused "import over its own model" "good.onnx" "input file" -- \
    $placeto import "$in/good.onnx" --out "$in/good.onnx"
}

# ---------------------------------------------------------------------------------------------
# Output paths: nothing is replaced that is not a regular file, and a failed write keeps the
# old file.
echo "old" > "$out/existing.json"
mkfifo "$out/fifo.json"
ln -s /dev/full "$out/link_to_full.json"
mkdir "$out/a_directory.json"
echo "not a folder" > "$out/plain_file"
refused "output is /dev/full" "--out /dev/full" "character device" -- place --out /dev/full
refused "output is /dev/null" "--out /dev/null" "character device" -- place --out /dev/null
refused "output is a directory" "a_directory.json" "is a directory" -- place --out "$out/a_directory.json"
refused "output is a FIFO" "fifo.json" "is a FIFO" -- place --out "$out/fifo.json"
refused "output is a link to a device" "link_to_full.json" "symbolic link to a character device" -- \
  place --out "$out/link_to_full.json"
refused "output folder missing" "$out/no/such/folder/p.json" "does not exist" -- \
  place --out "$out/no/such/folder/p.json"
refused "output under a regular file" "plain_file/p.json" "not a directory" -- \
  place --out "$out/plain_file/p.json"
refused "output is the input graph" "--out $in/g.json" "input file" -- place --out "$in/g.json"
refused "trace onto the placement" "--trace $in/p.json" "input file" -- \
  sim "$in/g.json" --placement "$in/p.json" --trace "$in/p.json"
refused "compare report onto a device" "--out /dev/full" -- \
  $placeto compare --graphs "$in/fam" --devices 2 --out /dev/full
if (($(id -u) != 0)); then  # root writes through permissions
  mkdir "$out/readonly"
  chmod 0555 "$out/readonly"
  refused "output folder not writable" "readonly" -- place --out "$out/readonly/p.json"
fi
# A write that fails (here: over the file-size limit, EFBIG) exits non-zero, keeps the old
# file and leaves no temporary behind.
before=$(sha256sum "$out/existing.json")
# (stderr through a pipe: a file would be cut by the same limit)
err=$( (
  ulimit -f 0
  trap '' XFSZ
  exec $placeto place --graph "$in/g.json" --devices 2 --method single --out "$out/existing.json"
) 2>&1 > /dev/null)
rc=$?
if ((rc != 0)) && [[ $(sha256sum "$out/existing.json") == "$before" ]] &&
  [[ ! -e $out/existing.json.tmp ]] && grep -qF "existing.json" <<< "$err"; then
  ok
else
  bad "failed write: exit $rc, old file kept? temporary left? $err"
fi
# And the same command with room to write succeeds, replacing the old file.
place --out "$out/existing.json" > /dev/null && grep -q '"placement"' "$out/existing.json" && ok ||
  bad "a normal write over an existing file"

finish hostile_inputs_test
