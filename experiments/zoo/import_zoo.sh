#!/usr/bin/env bash
# The zoo of real-size models (issue #33 item 4; experiments/zoo/README.md): exports them with
# Debian's PyTorch (export_zoo.py: structure only, nothing downloaded) unless
# runs/zoo/onnx/<model>.onnx exists, imports each as a training graph (forward, backward,
# updates; k80 profile) and prints, per model, its op count and its single-device bytes: the
# peak of live activations plus the parameters when every op runs on one device, as
# `placeto sim` reports them for the single-device placement.
#
# Usage: experiments/zoo/import_zoo.sh [model ...]   (default: every model below)
#   PLACETO_BIN=build-notorch/bin selects the executables (default build/bin).
#   Writes runs/zoo/<model>.json (the graph), runs/zoo/single/<model>.{placement,sim}.json
#   and runs/zoo/summary.tsv (model, ops, single-device bytes, parameter bytes, step us).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
bin=${PLACETO_BIN:-build/bin}
out=runs/zoo
onnx=$out/onnx
# model -> the flags of its import: the training batch (the decoders are exported at theirs,
# 8), and ViT's data input (its class token reaches a Concat and would otherwise be taken as
# data, docs/IMPORT.md).
declare -A flags=(
  [gpt12]="" [gpt48]=""
  [resnet152]="--batch 32" [inception_v3]="--batch 32" [googlenet]="--batch 32"
  [vit_b_16]="--batch 32 --inputs input"
  # The scale benchmark's deep, narrow decoders (issue #34; not in the default list).
  [gpt180w128]="" [gpt450w128]="")
models=("$@")
((${#models[@]})) || models=(gpt12 gpt48 resnet152 inception_v3 googlenet vit_b_16)
mkdir -p "$onnx" "$out/single"
missing=()
for m in "${models[@]}"; do
  [[ -v flags[$m] ]] || { echo "import_zoo.sh: unknown model $m (${!flags[*]})" >&2; exit 2; }
  [[ -f $onnx/$m.onnx ]] || missing+=("$m")
done
if ((${#missing[@]})); then
  list=$(IFS=,; echo "${missing[*]}")
  /usr/bin/python3 experiments/zoo/export_zoo.py "$onnx" --models "$list" \
    > "$out/export.log" 2>&1 || { cat "$out/export.log" >&2; exit 1; }
  grep '\.onnx:' "$out/export.log"
fi
# summary.tsv keeps the lines of the models not imported now.
summary=$out/summary.tsv
{
  printf 'model\tops\tsingle_device_bytes\tparam_bytes\tsingle_step_us\n'
  [[ ! -f $summary ]] ||
    tail -n +2 "$summary" | grep -v -F -w -f <(printf '%s\n' "${models[@]}") || true
} > "$summary.tmp"
mv "$summary.tmp" "$summary"
printf '%-14s %7s %22s %16s %14s\n' model ops single-device-bytes param-bytes step-us
for m in "${models[@]}"; do
  # shellcheck disable=SC2086  # the flags are words
  "$bin/placeto" import "$onnx/$m.onnx" --training ${flags[$m]} --out "$out/$m.json" \
    > "$out/$m.import.json" 2> "$out/$m.import.log"
  "$bin/placeto" place --graph "$out/$m.json" --devices 1 --method single \
    --out "$out/single/$m.placement.json" > /dev/null
  "$bin/placeto" sim --graph "$out/$m.json" --placement "$out/single/$m.placement.json" \
    > "$out/single/$m.sim.json"
  read -r ops peak params step < <(jq -r '[.ops, .peak_mem_bytes[0], .param_bytes[0],
    .runtime_us] | @tsv' "$out/single/$m.sim.json")
  bytes=$((peak + params))
  printf '%s\t%s\t%s\t%s\t%s\n' "$m" "$ops" "$bytes" "$params" "$step" >> "$summary"
  printf '%-14s %7d %22s %16s %14.0f\n' "$m" "$ops" "$bytes ($(numfmt --to=si "$bytes")B)" \
    "$params" "$step"
done
