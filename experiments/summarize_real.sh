#!/usr/bin/env bash
# The summary over seeds of a real-model study (RESULTS.md section 5): one table per cluster
# profile and model group from OUT/s<seed>/<profile>-<group>SUFFIX, printed and written to
# OUT/summary.md (with OUT/<profile>-<group>.md and a ratio plot beside it).
# Usage: experiments/summarize_real.sh OUT SUFFIX "SEEDS"
#   e.g. summarize_real.sh runs/real ".csv" "1 2 3" (real_models.sh),
#        summarize_real.sh runs/real-pergraph "/eval.csv" "1 2 3" (real_per_graph.sh)
set -euo pipefail
out=${1:?usage: summarize_real.sh OUT SUFFIX SEEDS}
suffix=${2:?usage: summarize_real.sh OUT SUFFIX SEEDS}
seeds=(${3:?usage: summarize_real.sh OUT SUFFIX SEEDS})
here=$(cd "$(dirname "$0")" && pwd)
for profile in k80 v100; do
  for group in conv seq; do
    args=()
    for seed in "${seeds[@]}"; do args+=("s$seed=$out/s$seed/$profile-$group$suffix"); done
    echo "## $profile-$group"
    /usr/bin/python3 "$here/summarize_eval.py" "$out/$profile-$group" "${args[@]}"
  done
done | tee "$out/summary.md"
