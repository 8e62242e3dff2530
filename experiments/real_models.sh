#!/usr/bin/env bash
# Real models (experiments/RESULTS.md section 5): ResNet-50, Inception-V3, a Transformer and
# an LSTM seq2seq exported to ONNX by PyTorch (tests/onnx/export_models.py), imported as
# training graphs (forward, backward, updates; convolutional models at batch 32, the others
# at their exported batch), placed zero-shot at D = 3 by the closest family's policy
# (cifar10 for the CNNs, nmt for the sequence models; trained by generalization.sh, seed 1
# by default) next to every classical placer, anneal and the lower bound, on two clusters:
# k80 (the paper's profile, compatible simulator) and 3 V100s on NVLink (heterogeneous
# simulator, experiments/clusters/v100x3_nvlink.yaml).
#
# Usage: experiments/real_models.sh [seed of the policies (default 1)]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
source launch/env.sh
seed=${1:-1}
bin=build/bin
out=runs/real
models=$out/onnx
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
if [[ ! -f $models/transformer.onnx ]]; then
  mkdir -p "$models"
  /usr/bin/python3 tests/onnx/export_models.py "$models" > "$out.export.log" 2>&1
fi
for profile in k80 v100; do
  for group in conv seq; do mkdir -p "$out/$profile/$group"; done
  for m in resnet50 inception_v3; do
    $bin/placeto import "$models/$m.onnx" --training --batch 32 --profile $profile \
      --out "$out/$profile/conv/$m.json" > /dev/null
  done
  for m in seq2seq transformer; do
    $bin/placeto import "$models/$m.onnx" --training --profile $profile \
      --out "$out/$profile/seq/$m.json" > /dev/null 2>&1
  done
done
declare -A policy=([conv]=cifar10 [seq]=nmt)
reports=()
for profile in k80 v100; do
  if [[ $profile == k80 ]]; then where=(--devices 3); else
    where=(--cluster experiments/clusters/v100x3_nvlink.yaml); fi
  for group in conv seq; do
    ckpt=runs/gen/${policy[$group]}/s$seed/checkpoints/LATEST
    [[ -f $ckpt ]] || { echo "real_models.sh: $ckpt is missing: run experiments/generalization.sh ${policy[$group]} first" >&2; exit 2; }
    $bin/placeto eval --checkpoint "$ckpt" --graphs "$out/$profile/$group" --split all \
      "${where[@]}" --samples 8 --seed "$seed" --out "$out/$profile-$group.csv" \
      > "$out/$profile-$group.log" 2>&1
    reports+=("$profile-$group=$out/$profile-$group.csv")
  done
done
for r in "${reports[@]}"; do
  echo "## ${r%%=*}"
  /usr/bin/python3 experiments/summarize_eval.py "$out/${r%%=*}" "$r"
done | tee "$out/summary.md"
