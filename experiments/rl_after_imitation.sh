#!/usr/bin/env bash
# RL after imitation against imitation alone (issue #19; experiments/RESULTS.md, "RL without
# a teacher"): for each seed s, on the quickstart-shaped family of seed 20 + s (the families of
# experiments/rl_no_teacher.sh), train experiments/configs/imitation_rl.yaml, then evaluate
# the checkpoint of the hand-over (imitation_iterations: imitation alone) and the final one
# (RL with the KL term after it) on the test split with the same seed.
#
# Usage: experiments/rl_after_imitation.sh FAMILY [seeds (default "1 2 3")] [jobs (default 2)]
#   Extra overrides: OVERRIDES="key=value ..."; run-name suffix: TAG=name; other binaries:
#   PLACETO_BIN=dir.  Outputs under runs/rl_after_imitation/<family>[-TAG]/ (summary.md).
set -euo pipefail
cd "$(dirname "$0")/.."
source launch/env.sh
source experiments/pool.sh
source experiments/study.sh
family=${1:?usage: experiments/rl_after_imitation.sh FAMILY [seeds] [jobs]}
family_spec "$family"
seeds=(${2:-1 2 3})
jobs=${3:-2}
bin=${PLACETO_BIN:-build/bin}
config=experiments/configs/imitation_rl.yaml
out=runs/rl_after_imitation/$family${TAG:+-$TAG}
mkdir -p "$out"
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
handover=$(awk '/^imitation_iterations:/ {print $2}' "$config")

train_one() {  # seed
  local s=$1 run=$out/s$1 data=runs/data/rl-$family-$((20 + $1))
  [[ -f $data/manifest.json ]] ||
    $bin/placeto generate --family "$family" --count 12 --test 4 --seed $((20 + s)) \
      "${spec[@]}" --out "$data" > /dev/null
  $bin/placeto train --config "$config" --run-dir "$run" --resume auto "family_dir=$data" \
    "seed=$s" keep_checkpoints=100 ${OVERRIDES:-} > "$run.train.log" 2>&1
  $bin/placeto eval --checkpoint "$run/checkpoints/ckpt_$handover.h5" --graphs "$data" \
    --split test --samples 8 --seed "$s" --out "$run/eval_imitation.csv" \
    > "$run.eval_imitation.log" 2>&1
  $bin/placeto eval --checkpoint "$run/checkpoints/LATEST" --graphs "$data" --split test \
    --samples 8 --seed "$s" --out "$run/eval_rl.csv" > "$run.eval_rl.log" 2>&1
  echo "seed $s done"
}

for s in "${seeds[@]}"; do pool_add "$jobs" train_one "$s"; done
pool_wait
/usr/bin/python3 experiments/summarize_rl_after_imitation.py "$out" "${seeds[@]}" | tee "$out/summary.md"
