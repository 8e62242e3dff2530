#!/usr/bin/env bash
# Per-graph training on the real models (experiments/RESULTS.md section 5): for each imported
# model (ResNet-50, Inception-V3, a Transformer, an LSTM seq2seq) and each of the two clusters
# (k80 profile, 3 devices; 3 V100s on NVLink), a policy trained by REINFORCE from scratch on
# that graph alone (experiments/per_graph.sh), then placed greedily, as the best of 8 and
# seeded into anneal, next to every classical placer.
#
# Usage: experiments/real_per_graph.sh [seeds (default "1 2 3")] [iterations (default 60)]
#                                      [jobs (default 2)]
#   Budget per graph: iterations x EPISODES (default 4) episodes.  Per seed:
#   runs/real-pergraph/s<seed>/<profile>-<group>/eval.csv; the summary over the seeds:
#   runs/real-pergraph/summary.md (OUT=dir writes there instead).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
source experiments/pool.sh
seeds=(${1:-1 2 3})
iters=${2:-60}
jobs=${3:-2}
out=${OUT:-runs/real-pergraph}
experiments/import_real_models.sh
one() {  # seed profile group: the two models of a group, one after the other
  local cluster=
  [[ $2 == v100 ]] && cluster=experiments/clusters/v100x3_nvlink.yaml
  CLUSTER=$cluster OUT=$out/s$1/$2-$3 \
    experiments/per_graph.sh "runs/real/$2/$3" "$1" "$iters" 1 > /dev/null
  echo "seed $1 $2-$3 done"
}
for seed in "${seeds[@]}"; do  # seed by seed, so that early seeds finish first
  for profile in k80 v100; do
    for group in conv seq; do pool_add "$jobs" one "$seed" "$profile" "$group"; done
  done
done
pool_wait
experiments/summarize_real.sh "$out" "/eval.csv" "${seeds[*]}"
