#!/usr/bin/env bash
# Learned placement on graphs a model never saw (issue #35 item 5; experiments/RESULTS.md
# sections 14-15): every search given T ms at 4, 8 and 16 k80 devices -- anneal, descent,
# auto without a model (--checkpoint none), and auto and policy-search with each model of
# MODELS.  The graphs: FAMILY generated with GRAPH_SEED (default linalg, the evaluation-only
# family of tiled Cholesky, LU and stencil task graphs, docs/FAMILIES.md), or the graph files
# of an existing directory GRAPHS (e.g. imported real models).
#
# Usage: [SEEDS="1 2 3"] [DEVICES="4 8 16"] [TIMES=1000] [MODELS="default"] [COUNT=8]
#        [FAMILY=linalg | GRAPHS=DIR] experiments/heldout_eval.sh GRAPH_SEED [OUT]
#   OUT defaults to runs/heldout_eval/<FAMILY or GRAPHS's name>_g<GRAPH_SEED>.  For linalg,
#   GRAPH_SEED 101 is the tuning set (looked at while deciding anything) and 202 the report set.
#   A MODELS entry NAME=PATH names a checkpoint outside models/ (e.g. a run's), labelled NAME.
#   Writes OUT/graphs/, OUT/d<D>_t<T>_s<seed>.csv (best, anneal, descent, auto without a
#   model) and OUT/d<D>_t<T>_s<seed>_<model>.csv (auto, policy-search with the model), then
#   prints experiments/summarize_heldout_eval.py OUT.  Run it alone: the budgets are times.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
[[ $# -ge 1 ]] || { echo "usage: $0 GRAPH_SEED [OUT]" >&2; exit 2; }
gseed=$1
family=${FAMILY:-linalg}
name=$family
[[ -n ${GRAPHS:-} ]] && name=$(basename "$GRAPHS")
out=${2:-runs/heldout_eval/${name}_g$gseed}
bin=${PLACETO_BIN:-build/bin}
read -r -a seeds <<< "${SEEDS:-1 2 3}"
read -r -a devices <<< "${DEVICES:-4 8 16}"
read -r -a times <<< "${TIMES:-1000}"
read -r -a models <<< "${MODELS:-default}"
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
if [[ -n ${GRAPHS:-} ]]; then
  mkdir -p "$out/graphs"
  cp -n "$GRAPHS"/*.json "$out/graphs/"
elif [[ ! -f $out/graphs/manifest.json ]]; then
  "$bin/placeto" generate --family "$family" --count "${COUNT:-8}" --seed "$gseed" \
    --out "$out/graphs" > /dev/null
fi
for d in "${devices[@]}"; do
  for t in "${times[@]}"; do
    for s in "${seeds[@]}"; do
      base=$out/d${d}_t${t}_s$s
      [[ -f $base.csv ]] ||
        "$bin/placeto" compare --graphs "$out/graphs" --devices "$d" --seed "$s" \
          --methods best,anneal,descent,auto --checkpoint none --time-ms "$t" \
          --out "$base.csv" > /dev/null
      for entry in "${models[@]}"; do
        m=${entry%%=*} ckpt=models/$entry.h5
        [[ $entry == *=* ]] && ckpt=${entry#*=}
        [[ -f ${base}_$m.csv ]] ||
          "$bin/placeto" compare --graphs "$out/graphs" --devices "$d" --seed "$s" \
            --methods auto,policy-search --checkpoint "$ckpt" --time-ms "$t" \
            --out "${base}_$m.csv" > /dev/null
      done
      echo "D=$d T=${t}ms seed $s done"
    done
  done
done
python3 experiments/summarize_heldout_eval.py "$out"
