#!/usr/bin/env bash
# The generalization study of one family at D = 3 (experiments/RESULTS.md section 4): generate
# the family (24 graphs, 16 train / 8 test), train one policy per seed on the train split
# with experiments/configs/gen_<family>.yaml, place the test split zero-shot with each final
# checkpoint (greedy and best of 8, next to every classical placer, anneal and the lower
# bound), then summarise over the seeds and plot the training curves.
#
# Usage: experiments/generalization.sh FAMILY [seeds (default "1 2 3")] [jobs (default 2)]
#   FAMILY: ptb | cifar10 | nmt.  Extra config overrides: OVERRIDES="key=value ..." and a
#   run-name suffix: TAG=name (for ablations).  Outputs under runs/gen/<family>[-TAG]/.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
source launch/env.sh
source experiments/pool.sh
source experiments/study.sh
family=${1:?usage: experiments/generalization.sh FAMILY [seeds] [jobs]}
seeds=(${2:-1 2 3})
jobs=${3:-2}
bin=build/bin
family_spec "$family"
data=runs/data/gen-$family
out=runs/gen/$family${TAG:+-$TAG}
[[ -f $data/manifest.json ]] ||
  $bin/placeto generate --family "$family" --count 24 --seed 7 --test 8 "${spec[@]}" \
    --out "$data" > /dev/null
mkdir -p "$out"
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1

train_one() {  # seed
  local s=$1 run=$out/s$1
  $bin/placeto train --config "experiments/configs/gen_$family.yaml" --run-dir "$run" \
    --resume auto "family_dir=$data" "seed=$s" ${OVERRIDES:-} > "$run.train.log" 2>&1
  $bin/placeto eval --checkpoint "$run/checkpoints/LATEST" --graphs "$data" --split test \
    --samples 8 --seed "$s" --out "$run/eval_final.csv" > "$run.eval.log" 2>&1
  echo "seed $s done: $(tail -n 1 "$run/eval.csv")"
}

for s in "${seeds[@]}"; do pool_add "$jobs" train_one "$s"; done
pool_wait

summarize_seeds "$out" "$family" "${seeds[@]}"
echo "summary: $out/summary.md, $out/summary_ratios.png; curves: $out/curves.png"
