#!/usr/bin/env bash
# Real models (experiments/RESULTS.md section 5): ResNet-50, Inception-V3, a Transformer and
# an LSTM seq2seq exported to ONNX by PyTorch (tests/onnx/export_models.py), imported as
# training graphs (forward, backward, updates; convolutional models at batch 32, the others
# at their exported batch), placed zero-shot at D = 3 by the closest family's policy
# (cifar10 for the CNNs, nmt for the sequence models; one policy per seed, trained by
# generalization.sh) next to every classical placer, anneal and the lower bound, on two
# clusters: k80 (the paper's profile, compatible simulator) and 3 V100s on NVLink
# (heterogeneous simulator, experiments/clusters/v100x3_nvlink.yaml).
#
# Usage: experiments/real_models.sh [seeds of the policies (default "1 2 3")]
#   TAG=name uses the policies of `TAG=name experiments/generalization.sh` (runs/gen/<family>-name)
#   and writes runs/real-name/.  Per seed: runs/real[-TAG]/s<seed>/<profile>-<group>.csv; the
#   summary over the seeds: runs/real[-TAG]/summary.md.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
source launch/env.sh
seeds=(${1:-1 2 3})
bin=build/bin
graphs=runs/real
out=runs/real${TAG:+-$TAG}
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
experiments/import_real_models.sh
declare -A policy=([conv]=cifar10 [seq]=nmt)
for seed in "${seeds[@]}"; do
  mkdir -p "$out/s$seed"
  for profile in k80 v100; do
    if [[ $profile == k80 ]]; then where=(--devices 3); else
      where=(--cluster experiments/clusters/v100x3_nvlink.yaml); fi
    for group in conv seq; do
      ckpt=runs/gen/${policy[$group]}${TAG:+-$TAG}/s$seed/checkpoints/LATEST
      [[ -f $ckpt ]] || { echo "real_models.sh: $ckpt is missing: run ${TAG:+TAG=$TAG }experiments/generalization.sh ${policy[$group]} first" >&2; exit 2; }
      $bin/placeto eval --checkpoint "$ckpt" --graphs "$graphs/$profile/$group" --split all \
        "${where[@]}" --samples 8 --seed "$seed" --out "$out/s$seed/$profile-$group.csv" \
        > "$out/s$seed/$profile-$group.log" 2>&1
    done
  done
  echo "seed $seed done"
done
experiments/summarize_real.sh "$out" ".csv" "${seeds[*]}"
