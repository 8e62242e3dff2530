#!/usr/bin/env bash
# Exports the four real models to ONNX with PyTorch (tests/onnx/export_models.py) and imports
# each as a training graph (forward, backward, updates; convolutional models at batch 32, the
# others at their exported batch) for the two device profiles of RESULTS.md section 5.
# Used by real_models.sh (zero-shot) and real_per_graph.sh (per-graph training).
#
# Usage: experiments/import_real_models.sh
#   Writes runs/real/onnx/*.onnx and runs/real/<k80|v100>/<conv|seq>/<model>.json.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bin=build/bin
graphs=runs/real
models=$graphs/onnx
if [[ ! -f $models/transformer.onnx ]]; then
  mkdir -p "$models"
  /usr/bin/python3 tests/onnx/export_models.py "$models" > "$graphs.export.log" 2>&1 ||
    { cat "$graphs.export.log" >&2; exit 1; }
fi
for profile in k80 v100; do
  for group in conv seq; do mkdir -p "$graphs/$profile/$group"; done
  for m in resnet50 inception_v3; do
    $bin/placeto import "$models/$m.onnx" --training --batch 32 --profile $profile \
      --out "$graphs/$profile/conv/$m.json" > /dev/null
  done
  for m in seq2seq transformer; do
    $bin/placeto import "$models/$m.onnx" --training --profile $profile \
      --out "$graphs/$profile/seq/$m.json" > /dev/null 2>&1
  done
done
