#!/usr/bin/env bash
# What moves beyond one op add to the learned search (issue #35 item 3; experiments/RESULTS.md
# section 15): policy-search with the one scorer, every candidate a single-op move, or a share
# of them widened to the op's training group, to a segment of its forward chain, or to a swap
# (--search-set, docs/LEARNED_SEARCH.md).  Equal simulation budgets, so the machine's load
# does not matter.  Graphs: 8 linalg and 4 of each training family, generator seed GRAPH_SEED.
#
# Usage: [SEEDS="1 2"] [DEVICES="4 8 16"] [BUDGET=3000] [MODEL=models/default.h5]
#        experiments/move_kinds.sh GRAPH_SEED [OUT (default runs/move_kinds/g<GRAPH_SEED>)]
#   Writes OUT/<family>/ (graphs), OUT/<setting>_d<D>_s<seed>_<family>.csv, then prints
#   experiments/summarize_move_kinds.py OUT.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
[[ $# -ge 1 ]] || { echo "usage: $0 GRAPH_SEED [OUT]" >&2; exit 2; }
gseed=$1
out=${2:-runs/move_kinds/g$gseed}
bin=${PLACETO_BIN:-build/bin}
model=${MODEL:-models/default.h5}
read -r -a seeds <<< "${SEEDS:-1 2}"
read -r -a devices <<< "${DEVICES:-4 8 16}"
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
declare -A sets=(
  [single]="--search-set group_share=0"
  [group]="--search-set group_share=0.3"
  [segment]="--search-set group_share=0 --search-set segment_share=0.3"
  [swap]="--search-set group_share=0 --search-set swap_share=0.3"
  [mixed]="--search-set group_share=0.1 --search-set segment_share=0.1 --search-set swap_share=0.1"
)
for fam in linalg ptb nmt cifar10 layered; do
  count=4; [[ $fam == linalg ]] && count=8
  [[ -f $out/$fam/manifest.json ]] ||
    "$bin/placeto" generate --family "$fam" --count "$count" --seed "$gseed" --out "$out/$fam" > /dev/null
done
for d in "${devices[@]}"; do
  for s in "${seeds[@]}"; do
    for name in single group segment swap mixed; do
      for fam in linalg ptb nmt cifar10 layered; do
        f=$out/${name}_d${d}_s${s}_$fam.csv
        # shellcheck disable=SC2086
        [[ -f $f ]] ||
          "$bin/placeto" compare --graphs "$out/$fam" --devices "$d" --seed "$s" \
            --methods policy-search --checkpoint "$model" --budget "${BUDGET:-3000}" \
            ${sets[$name]} --out "$f" > /dev/null 2>&1
      done
    done
    echo "D=$d seed $s done"
  done
done
python3 experiments/summarize_move_kinds.py "$out"
