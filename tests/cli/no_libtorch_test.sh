#!/usr/bin/env bash
# The commands that do not need LibTorch never load it (issue #36): each runs under
# LD_DEBUG=files, the dynamic loader's own record of every file it maps (dlopen included),
# and the record must name no libtorch.  A control shows that the record would catch it: in a
# build with LibTorch, `placeto eval --help` does load it (from libplaceto_policy.so).
# Usage: no_libtorch_test.sh BIN_DIR
set -uo pipefail
source "$(dirname "$0")/../lib.sh"
have_torch=0
[[ -f "$bin/../lib/libplaceto_policy.so" ]] && have_torch=1

if ldd "$bin/placeto" | grep -q libtorch; then
  bad "placeto links libtorch: $(ldd "$bin/placeto" | grep torch | head -1)"
else
  ok "placeto does not link libtorch"
fi

# check NAME CMD...: CMD succeeds and maps no libtorch.
check() {
  local name=$1
  shift
  if ! LD_DEBUG=files "$@" > "$tmp/$name.out" 2> "$tmp/$name.ld"; then
    bad "$name failed: $(grep -v '^ *[0-9]*:' "$tmp/$name.ld" | tail -3)"
  elif ! grep -q "file=libstdc++" "$tmp/$name.ld"; then
    bad "$name: LD_DEBUG recorded nothing"
  elif grep -q "file=.*libtorch" "$tmp/$name.ld"; then
    bad "$name loaded libtorch: $(grep -m1 'file=.*libtorch' "$tmp/$name.ld")"
  else
    ok "$name maps no libtorch"
  fi
}

p="$bin/placeto"
check help "$p" --help
check version "$p" --version
check place_help "$p" place --help
check generate "$p" generate --family ptb --count 2 --test 1 --seed 1 --out "$tmp/fam" \
  --steps 2 --layers 1 --cell-nodes 3
g=$(ls "$tmp"/fam/test/*.json 2> /dev/null | head -1)
[[ -n "$g" ]] || g=$(find "$tmp/fam" -name '*.json' ! -name manifest.json | head -1)
check place_metis "$p" place --graph "$g" --devices 2 --method metis --out "$tmp/metis.json"
check sim "$p" sim --graph "$g" --placement "$tmp/metis.json"
check place_anneal "$p" place --graph "$g" --devices 2 --method anneal --budget 200 \
  --out "$tmp/anneal.json"
check place_scorer "$p" place --graph "$g" --devices 2 --method scorer-greedy \
  --checkpoint "$src/models/ptb.h5" --out "$tmp/scorer.json"
check place_auto "$p" place --graph "$g" --devices 2 --method auto --time-ms 100 \
  --checkpoint "$src/models/ptb.h5" --out "$tmp/auto.json"
check compare "$p" compare --graphs "$tmp/fam" --devices 2 --out "$tmp/compare.csv"
check coarsen "$p" coarsen --graph "$g" --groups 8 --out "$tmp/coarse.json" --map "$tmp/map.json"
check ckpt_info "$p" ckpt-info "$src/models/ptb.h5"

# import and export: a small ONNX model written with the onnx package (no torch).
if "$py" - "$tmp/mlp.onnx" << 'PY'; then
import sys
import numpy as np
from onnx import TensorProto, helper, numpy_helper, save
w1 = numpy_helper.from_array(np.zeros((64, 128), np.float32), "w1")
w2 = numpy_helper.from_array(np.zeros((128, 10), np.float32), "w2")
nodes = [helper.make_node("MatMul", ["x", "w1"], ["h"]), helper.make_node("Relu", ["h"], ["r"]),
         helper.make_node("MatMul", ["r", "w2"], ["y"])]
graph = helper.make_graph(nodes, "mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [32, 64])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [32, 10])], [w1, w2])
save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), sys.argv[1])
PY
  check import "$p" import "$tmp/mlp.onnx" --training --out "$tmp/mlp.json"
  check place_mlp "$p" place --graph "$tmp/mlp.json" --devices 2 --method metis \
    --out "$tmp/mlp.placement.json"
  check export "$p" export --onnx "$tmp/mlp.onnx" \
    --placement "$tmp/mlp.placement.json" --devices 2 --format onnx \
    --out "$tmp/mlp.placed.onnx"
else
  bad "could not write the ONNX model"
fi

# The control: the record does show libtorch when a command needs it.
if ((have_torch)); then
  if LD_DEBUG=files "$p" eval --help > "$tmp/eval.out" 2> "$tmp/eval.ld" &&
    grep -q "file=.*libtorch" "$tmp/eval.ld" && grep -q -- "--checkpoint" "$tmp/eval.out"; then
    ok "control: placeto eval --help loads libtorch and prints eval's options"
  else
    bad "control: placeto eval --help did not load libtorch or print its options"
    tail -3 "$tmp/eval.out"
  fi
fi
finish no_libtorch
