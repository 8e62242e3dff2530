#!/usr/bin/env bash
# Trains the learned search's move scorer for the three families with 3 seeds each
# (experiments/configs/search_<family>.yaml, 2 MPI ranks: 40 epochs of imitation, then 20 of
# RL), and ships seed 1 as models/<family>.h5 (+ its .sha256).  About 35 minutes on 2 cores.
#
# Usage: experiments/train_search_models.sh [families (default "ptb nmt cifar10")] [seeds (default "1 2 3")]
#   Writes runs/search_<family>_s<seed>/ (config.yaml, metrics.csv, logs/, checkpoints/).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
source launch/env.sh
families=(${1:-ptb nmt cifar10})
seeds=(${2:-1 2 3})
for family in "${families[@]}"; do
  for seed in "${seeds[@]}"; do
    run=runs/search_${family}_s$seed
    # A run that exists is continued (--resume auto): after a preemption, or to add the RL
    # epochs to a run that only imitated (the result is the same as a straight run).
    resume=none
    [[ -f $run/checkpoints/LATEST ]] && resume=auto
    mpirun --oversubscribe -np 2 build/bin/placeto_actor \
      --config experiments/configs/search_$family.yaml --run-dir "$run" --resume $resume seed=$seed
    if [[ $seed == 1 ]]; then
      latest=$run/checkpoints/$(cat "$run/checkpoints/LATEST")
      mkdir -p models
      cp "$latest" models/$family.h5
      (cd models && sha256sum $family.h5 > $family.h5.sha256)
    fi
  done
done
