#!/usr/bin/env bash
# What the RL epochs add to the imitated move scorer (issue #20; issue #19's "RL after
# imitation ends strictly better than imitation alone"): for each family and training seed,
# the scorer after its 40 imitation epochs (runs/imitation/search_<family>_s<seed>.h5) against
# the same run after its 20 RL epochs (runs/search_<family>_s<seed>, from
# experiments/train_search_models.sh), on 4 held-out graphs per family (generator seed
# GRAPH_SEED, default 6262), 2/3/4 k80 devices, 3 search seeds.  Both at equal simulations
# (--budget B, default 1000: the two scorers cost the same per proposal, so this is also equal
# time and does not depend on the machine's load) and the greedy policy.
#
# Usage: [GRAPH_SEED=6262] [B=1000] experiments/rl_vs_imitation.sh [OUT (default runs/rl_vs_imitation)]
#   The imitation checkpoints: copy ckpt_40.h5 of each run before its RL epochs replace it,
#   or rerun the config with rl_epochs=0 (the same bytes).  Writes OUT/*.csv, then
#   experiments/results/rl_vs_imitation.md.  A few minutes on 2 cores.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
graph_seed=${GRAPH_SEED:-6262}
budget=${B:-1000}
out=${1:-runs/rl_vs_imitation}
bin=${PLACETO_BIN:-build/bin}
mkdir -p "$out"
for family in ptb nmt cifar10; do
  [[ -f $out/$family/graphs/manifest.json ]] ||
    $bin/placeto generate --family "$family" --count 4 --seed "$graph_seed" --out "$out/$family/graphs" > /dev/null
  for m in 1 2 3; do
    imitation=runs/imitation/search_${family}_s$m.h5
    rl=runs/search_${family}_s$m/checkpoints
    [[ -f $imitation && -f $rl/LATEST ]] || { echo "missing $imitation or $rl/LATEST" >&2; exit 2; }
    for d in 2 3 4; do
      for seed in 1 2 3; do
        for kind in imitation rl; do
          ck=$imitation
          [[ $kind == rl ]] && ck=$rl
          $bin/placeto compare --graphs "$out/$family/graphs" --devices "$d" --seed "$seed" \
            --methods policy,policy-search --checkpoint "$ck" --budget "$budget" \
            --out "$out/$family-d$d-m$m-s$seed-$kind.csv" > /dev/null 2>&1
        done
      done
    done
  done
  echo "$family done"
done
python3 experiments/summarize_rl_vs_imitation.py "$out" "$graph_seed" "$budget" > experiments/results/rl_vs_imitation.md
cat experiments/results/rl_vs_imitation.md
