#!/usr/bin/env bash
# RL without a teacher (issue #19; experiments/RESULTS.md, "RL without a teacher"): for each
# seed s, generate a quickstart-shaped family (12 graphs, 8 train / 4 test) with family seed
# 20 + s -- not the family the settings were tuned on (seed 11) -- train on its train split
# with experiments/configs/reinforce.yaml (reinforce_nmt.yaml for nmt; no imitation, no
# classical start) and seed s, then place the test split zero-shot with the final checkpoint
# next to the classical placers.
#
# Usage: experiments/rl_no_teacher.sh FAMILY [seeds (default "1 2 3")] [jobs (default 2)]
#   FAMILY: ptb | cifar10 | nmt.  Extra config overrides: OVERRIDES="key=value ..."; run-name suffix:
#   TAG=name; another config: CONFIG=path; other binaries: PLACETO_BIN=dir.  Outputs under runs/rl/<family>[-TAG]/ (summary.md, curves.png, per-seed runs).
set -euo pipefail
cd "$(dirname "$0")/.."
source launch/env.sh
source experiments/pool.sh
source experiments/study.sh
family=${1:?usage: experiments/rl_no_teacher.sh FAMILY [seeds] [jobs]}
family_spec "$family"
seeds=(${2:-1 2 3})
jobs=${3:-2}
bin=${PLACETO_BIN:-build/bin}
config=experiments/configs/reinforce.yaml
[[ -f experiments/configs/reinforce_$family.yaml ]] && config=experiments/configs/reinforce_$family.yaml
config=${CONFIG:-$config}
out=runs/rl/$family${TAG:+-$TAG}
mkdir -p "$out"
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1

train_one() {  # seed
  local s=$1 run=$out/s$1 data=runs/data/rl-$family-$((20 + $1))
  [[ -f $data/manifest.json ]] ||
    $bin/placeto generate --family "$family" --count 12 --test 4 --seed $((20 + s)) \
      "${spec[@]}" --out "$data" > /dev/null
  $bin/placeto train --config "$config" --run-dir "$run" \
    --resume auto "family_dir=$data" "seed=$s" ${OVERRIDES:-} > "$run.train.log" 2>&1
  $bin/placeto eval --checkpoint "$run/checkpoints/LATEST" --graphs "$data" --split test \
    --samples 8 --seed "$s" --out "$run/eval_final.csv" > "$run.eval.log" 2>&1
  /usr/bin/python3 experiments/plot_training.py "$run" > /dev/null
  echo "seed $s done"
}

for s in "${seeds[@]}"; do pool_add "$jobs" train_one "$s"; done
pool_wait

summarize_seeds "$out" "$family" "${seeds[@]}" -- --own-graphs
echo "summary: $out/summary.md; curves: $out/curves.png; per run: $out/s<seed>/training.png"
