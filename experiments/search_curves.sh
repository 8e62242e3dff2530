#!/usr/bin/env bash
# Classical searches at equal time (issue #20's bar for a learned search): anneal,
# slack-anneal (criticality-weighted proposals) and steepest descent, each given T ms per
# graph (--time-ms: the budget is sized to T and the search completes its schedule), on
# default-size graphs of the three families (4 per family, generator seed 4242, used by no
# training run), at 2, 3 and 4 k80 devices, 5 search seeds.
#
# Usage: experiments/search_curves.sh [OUT (default runs/search_curves)] [T values (default "10 30 100 300")]
#   Writes OUT/<family>/graphs, OUT/<family>-d<D>-t<T>-s<seed>.csv (placeto compare), then
#   experiments/results/search_curves.md and experiments/figures/search_curves.png.  About 6
#   minutes on 2 cores; run it alone (the budgets are sized to this machine's speed).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
out=${1:-runs/search_curves}
times=(${2:-10 30 100 300})
bin=build/bin
mkdir -p "$out"
for family in ptb nmt cifar10; do
  [[ -f $out/$family/graphs/manifest.json ]] ||
    $bin/placeto generate --family "$family" --count 4 --seed 4242 --out "$out/$family/graphs" > /dev/null
  for d in 2 3 4; do
    for t in "${times[@]}"; do
      for seed in 1 2 3 4 5; do
        $bin/placeto compare --graphs "$out/$family/graphs" --devices "$d" --seed "$seed" \
          --methods anneal,slack-anneal,descent --time-ms "$t" \
          --out "$out/$family-d$d-t$t-s$seed.csv" > /dev/null
      done
    done
    echo "$family d=$d done"
  done
done
/usr/bin/python3 experiments/summarize_search_curves.py "$out" --md experiments/results/search_curves.md \
  --png experiments/figures/search_curves.png
