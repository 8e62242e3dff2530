#!/usr/bin/env bash
# The generalization study at the paper's scale, for a SLURM cluster (NOT measured here; see
# experiments/RESULTS.md, section 8): the three families at their default sizes (32 graphs of
# 300-370 ops, 24 train / 8 test), D = 2, 3 and 5, 3 seeds, 20000 iterations of the
# imitation warm start on 16 ranks per job (4 nodes x 4) (launch/slurm/train_srun.sbatch, which checkpoints
# and requeues itself on preemption).  Evaluate each run afterwards with
#   build/bin/placeto eval --checkpoint RUN/checkpoints/LATEST --graphs DATA --samples 8 \
#     --devices D --out RUN/eval_final.csv
#
# Usage: experiments/slurm_study.sh [--dry-run] [sbatch options, e.g. --partition=gpu]
#   --dry-run prints the sbatch commands instead of submitting them.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
dry=0
if [[ ${1:-} == --dry-run ]]; then dry=1; shift; fi
bin=build/bin
for family in ptb cifar10 nmt; do
  data=$root/runs/data/study-$family
  if [[ ! -f $data/manifest.json ]]; then
    if ((dry)); then
      echo "$bin/placeto generate --family $family --count 32 --seed 7 --out $data"
    else
      $bin/placeto generate --family "$family" --count 32 --seed 7 --out "$data" > /dev/null
    fi
  fi
  for devices in 2 3 5; do
    for seed in 1 2 3; do
      run=$root/runs/study/$family-D$devices/s$seed
      cmd=(env "PLACETO_CONFIG=$root/experiments/configs/gen_$family.yaml"
        "PLACETO_RUN_DIR=$run"
        "PLACETO_OVERRIDES=family_dir=$data devices=$devices seed=$seed iterations=20000 imitation_iterations=20000 checkpoint_every=500 eval_every=1000"
        sbatch --job-name="placeto-$family-D$devices-s$seed" --nodes=4 --ntasks-per-node=4 "$@"
        launch/slurm/train_srun.sbatch)
      if ((dry)); then printf '%q ' "${cmd[@]}"; echo; else "${cmd[@]}"; fi
    done
  done
done
