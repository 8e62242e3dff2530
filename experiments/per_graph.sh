#!/usr/bin/env bash
# Per-graph training (experiments/RESULTS.md sections 4 and 5): a policy trained from scratch
# on each graph alone, with REINFORCE as in the reference (no imitation), for a fixed budget,
# then placed greedily and as the best of 8, next to every classical placer.  The paper's
# per-graph baseline.
#
# Usage: experiments/per_graph.sh FAMILY|DIR [seed (default 1)] [iterations (default 200)]
#                                 [jobs (default 2)]
#   FAMILY: the test split of runs/data/gen-FAMILY (made by experiments/generalization.sh);
#   DIR: every graph file (*.json) in that directory (e.g. imported real models).
#   Budget: iterations x EPISODES (default 4) episodes per graph.
#   CLUSTER=file.yaml trains and places on that cluster (default: 3 devices of the k80 profile).
#   OUT=dir writes there instead of runs/pergraph/<family>/s<seed>: one folder per graph and
#   one merged report OUT/eval.csv.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
source launch/env.sh
source experiments/pool.sh
source=${1:?usage: experiments/per_graph.sh FAMILY|DIR [seed] [iterations] [jobs]}
seed=${2:-1}
iters=${3:-200}
jobs=${4:-2}
episodes=${EPISODES:-4}
bin=build/bin
train_where=(devices=3)
eval_where=(--devices 3)
if [[ -n ${CLUSTER:-} ]]; then
  [[ -f $CLUSTER ]] || { echo "per_graph.sh: CLUSTER=$CLUSTER: no such file" >&2; exit 2; }
  train_where=("cluster=$CLUSTER")
  eval_where=(--cluster "$CLUSTER")
fi
if [[ -d $source ]]; then
  data=$source
  out=${OUT:-runs/pergraph/$(basename "$source")/s$seed}
  mapfile -t tests < <(cd "$data" && ls -1 -- *.json 2> /dev/null | grep -v '^manifest.json$' || true)
  ((${#tests[@]})) || { echo "per_graph.sh: $data holds no graph files (*.json)" >&2; exit 2; }
else
  data=runs/data/gen-$source
  out=${OUT:-runs/pergraph/$source/s$seed}
  [[ -f $data/manifest.json ]] || {
    echo "per_graph.sh: $data is missing: run experiments/generalization.sh $source first" >&2
    exit 2
  }
  mapfile -t tests < <(/usr/bin/python3 -c "import json,sys; print('\n'.join(json.load(open(sys.argv[1]))['test']))" "$data/manifest.json")
fi
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1

one() {  # graph file name
  local g=${1%.json}
  local dir=$out/$g
  mkdir -p "$dir/graph"
  cp "$data/$1" "$dir/graph/"
  $bin/placeto train --config experiments/configs/quickstart.yaml --run-dir "$dir/run" \
    --resume auto "family_dir=$dir/graph" "seed=$seed" "iterations=$iters" "${train_where[@]}" \
    "episodes_per_iteration=$episodes" normalize_advantages=true checkpoint_every=100 imitation_iterations=0 \
    > "$dir/train.log" 2>&1
  $bin/placeto eval --checkpoint "$dir/run/checkpoints/LATEST" --graphs "$dir/graph" \
    --split all "${eval_where[@]}" --samples 8 --seed "$seed" --out "$dir/eval.csv" > "$dir/eval.log" 2>&1
  echo "$g done"
}

for g in "${tests[@]}"; do pool_add "$jobs" one "$g"; done
pool_wait
first=1
for g in "${tests[@]}"; do
  f=$out/${g%.json}/eval.csv
  if ((first)); then head -n 1 "$f"; first=0; fi
  tail -n +2 "$f"
done > "$out/eval.csv"
echo "per-graph report: $out/eval.csv"
