#!/usr/bin/env bash
# auto's first-descent share (issue #35 item 4; RESULTS.md section 15): auto without a model
# (--checkpoint none) with --search-set descent_share=0, 0.25 and 0.5 against anneal and
# descent, each given 20,000 simulations, on the graphs of experiments/move_kinds.sh
# GRAPH_SEED (run that first: 8 linalg and 4 of each training family), 4, 8 and 16 k80
# devices, search seed 1.  Budgets, not times: the machine's load does not matter.
#
# Usage: experiments/auto_tune.sh GRAPH_SEED   (writes runs/auto_tune/g<GRAPH_SEED>/, then
#   prints experiments/summarize_auto_tune.py's table)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
gseed=${1:?usage: $0 GRAPH_SEED}
bin=${PLACETO_BIN:-build/bin}
graphs=runs/move_kinds/g$gseed
out=runs/auto_tune/g$gseed
mkdir -p "$out"
for d in 4 8 16; do
  for fam in linalg ptb nmt cifar10 layered; do
    f=$out/base_d${d}_$fam.csv
    [[ -f $f ]] ||
      "$bin/placeto" compare --graphs "$graphs/$fam" --devices "$d" --seed 1 \
        --methods anneal,descent --budget 20000 --out "$f" > /dev/null 2>&1
    for sh in 0 0.25 0.5; do
      f=$out/auto${sh}_d${d}_$fam.csv
      [[ -f $f ]] ||
        "$bin/placeto" compare --graphs "$graphs/$fam" --devices "$d" --seed 1 \
          --methods auto --checkpoint none --search-set descent_share=$sh --budget 20000 \
          --out "$f" > /dev/null 2>&1
    done
  done
  echo "D=$d done"
done
python3 experiments/summarize_auto_tune.py "$out"
