#!/usr/bin/env bash
# The cost model against this machine (docs/COST_MODEL.md "Measured against a real device"):
# every op of five PyTorch models timed on one CPU thread with `placeto profile`, as training
# steps at the exported batch (1); a device profile fitted on ResNet-50 and the Transformer
# encoder; its error on the three models it was not fitted on, beside the k80 profile's (as
# is, and rescaled by one factor); the simulated single-device step against a training step
# measured end to end in PyTorch.
#
# Usage: experiments/cost_model.sh [OUT (default runs/cost_model)]
#   Writes OUT/models/*.onnx, OUT/<model>.{json,csv,profile.yaml,out.json}, OUT/fitted_rt.yaml,
#   OUT/step.json, then experiments/results/cost_model.md and
#   experiments/figures/cost_model_heldout.png.  About 5 minutes on 2 cores (run it alone: the
#   timings are of this machine and another job skews them).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
out=${1:-runs/cost_model}
bin=build/bin
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
mkdir -p "$out/models"
models=(transformer resnet50 inception_v3 seq2seq mobilenet_v2)
/usr/bin/python3 tests/onnx/export_models.py "$out/models" --models "$(IFS=,; echo "${models[*]}")"
profile() {  # model, then extra flags
  local m=$1
  shift
  $bin/placeto profile "$out/models/$m.onnx" --training --out "$out/$m.json" \
    --report "$out/$m.csv" "$@" > "$out/$m.out.json"
}
# Fitted on two models: the Transformer first, then ResNet-50 pooled with its report.
profile transformer
profile resnet50 --fit-with "$out/transformer.csv" --fit-out "$out/fitted_rt.yaml" \
  --fitted-name cpu-fitted-resnet50-transformer
# Held out: the fitted profile's error on models it has not seen, and k80's on the same
# measurements.
for m in inception_v3 seq2seq mobilenet_v2; do
  profile "$m" --profile "$out/fitted_rt.yaml" --also-profile k80
done
/usr/bin/python3 experiments/measure_train_step.py "$out/step.json" --models "$(IFS=,; echo "${models[*]}")"
/usr/bin/python3 experiments/summarize_cost_model.py "$out" \
  --md experiments/results/cost_model.md --png experiments/figures/cost_model_heldout.png
