#!/bin/bash
# Coarsening report on imported ONNX graphs of <= 300 ops (docs/IMPORT.md "Coarsening and
# mapping back"): exports the four test models with Debian's torch (skipped when already
# there), imports them, and runs placeto_families_report --coarsen on the graphs: cut bytes of
# coarsen() vs topological chunking, and the best coarse placement (ungrouped, simulated on
# the ops) vs the best placement of the ops.
#
#   launch/onnx_coarsen_report.sh [BIN_DIR=build/bin] [WORK_DIR=build/onnx_report] [ITERATIONS=20000]
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-build/bin}
work=${2:-build/onnx_report}
iterations=${3:-20000}
mkdir -p "$work"
[ -f "$work/seq2seq.onnx" ] || /usr/bin/python3 "$here/tests/onnx/export_models.py" "$work" >&2

# Graphs of <= 300 ops: ResNet-50 and the LSTM seq2seq as training steps, Inception-V3 and the
# Transformer encoder (397 ops as a training step) as inference; batch 32 for all.
"$bin/placeto" import "$work/resnet50.onnx" --out "$work/resnet50_train.json" --training \
  --batch 32 > /dev/null
"$bin/placeto" import "$work/seq2seq.onnx" --out "$work/seq2seq_train.json" --training \
  --batch 32 > /dev/null
"$bin/placeto" import "$work/inception_v3.onnx" --out "$work/inception_v3.json" --batch 32 \
  > /dev/null
"$bin/placeto" import "$work/transformer.onnx" --out "$work/transformer.json" --batch 32 \
  > /dev/null

"$bin/placeto_families_report" --coarsen 20 --coarsen 50 --coarsen 100 --devices 3 \
  --iterations "$iterations" \
  --graph-file "$work/resnet50_train.json" --graph-file "$work/inception_v3.json" \
  --graph-file "$work/transformer.json" --graph-file "$work/seq2seq_train.json"
