#!/usr/bin/env bash
# Learned placement on graphs nobody here trained on (issue #35 item 5; experiments/RESULTS.md
# section 14): the evaluation-only linalg family (tiled Cholesky, LU and stencil task graphs,
# docs/FAMILIES.md) at 4, 8 and 16 k80 devices, every search given T ms: anneal, descent,
# auto without a model, and auto and policy-search with each shipped move scorer (none of
# which saw these graphs).
#
# Usage: [SEEDS="1 2 3"] [DEVICES="4 8 16"] [TIMES=1000] [MODELS="nmt"] [COUNT=8]
#        experiments/linalg_eval.sh GRAPH_SEED [OUT (default runs/linalg_eval/g<GRAPH_SEED>)]
#   GRAPH_SEED 101 is the tuning set (looked at while deciding anything); 202 is the report set.
#   A MODELS entry NAME=PATH names a checkpoint outside models/ (e.g. a run's), labelled NAME.
#   Writes OUT/graphs/, OUT/d<D>_t<T>_s<seed>.csv (anneal, descent, auto) and
#   OUT/d<D>_t<T>_s<seed>_<model>.csv (auto, policy-search with models/<model>.h5), then
#   prints experiments/summarize_linalg_eval.py OUT.  Run it alone: the budgets are times.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
[[ $# -ge 1 ]] || { echo "usage: $0 GRAPH_SEED [OUT]" >&2; exit 2; }
gseed=$1
out=${2:-runs/linalg_eval/g$gseed}
bin=${PLACETO_BIN:-build/bin}
read -r -a seeds <<< "${SEEDS:-1 2 3}"
read -r -a devices <<< "${DEVICES:-4 8 16}"
read -r -a times <<< "${TIMES:-1000}"
read -r -a models <<< "${MODELS:-nmt}"
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
[[ -f $out/graphs/manifest.json ]] ||
  "$bin/placeto" generate --family linalg --count "${COUNT:-8}" --seed "$gseed" --out "$out/graphs" > /dev/null
for d in "${devices[@]}"; do
  for t in "${times[@]}"; do
    for s in "${seeds[@]}"; do
      base=$out/d${d}_t${t}_s$s
      [[ -f $base.csv ]] ||
        "$bin/placeto" compare --graphs "$out/graphs" --devices "$d" --seed "$s" \
          --methods best,anneal,descent,auto --time-ms "$t" --out "$base.csv" > /dev/null
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
python3 experiments/summarize_linalg_eval.py "$out"
