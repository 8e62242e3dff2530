#!/usr/bin/env bash
# Trains the default move scorer (experiments/configs/search_broad.yaml; shipped as
# models/default.h5 + .sha256) and the three leave-one-family-out scorers
# (search_without_<family>.yaml, kept in runs/ for experiments/heldout_eval.sh), 2 MPI ranks
# each.  The broad mix reads runs/zoo/googlenet.json: experiments/zoo/import_zoo.sh makes it.
# About 60 minutes for the default and 10-15 for each of the others on 2 cores.
#
# Usage: [PLACETO_BIN=build/bin] experiments/train_default_models.sh [configs (default
#        "broad without_ptb without_nmt without_cifar10")]
#   Writes runs/search_<config>_s1/ (config.yaml, metrics.csv, logs/, checkpoints/); a run
#   that exists is continued (--resume auto).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
source launch/env.sh
bin=${PLACETO_BIN:-build/bin}
read -r -a configs <<< "${1:-broad without_ptb without_nmt without_cifar10}"
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
for name in "${configs[@]}"; do
  run=runs/search_${name}_s1
  resume=none
  [[ -f $run/checkpoints/LATEST ]] && resume=auto
  mpirun --oversubscribe -np 2 "$bin/placeto_actor" \
    --config "experiments/configs/search_$name.yaml" --run-dir "$run" --resume $resume
  if [[ $name == broad ]]; then
    cp "$run/checkpoints/$(cat "$run/checkpoints/LATEST")" models/default.h5
    (cd models && sha256sum default.h5 > default.h5.sha256)
  fi
done
