#!/usr/bin/env bash
# The learned-search move scorers before and after they saw memory (issue #33 item 3;
# experiments/RESULTS.md section 12): on 4 fresh default-size graphs per family (generator seed
# 6262, never used in training; the scorers train on seed 11), at 2, 3 and 4 k80 devices,
# uncapped and capped at f = 1.2 x each graph's balanced share, 2 search seeds: `best`,
# `anneal`, `descent` and, with each model, `policy-search` and `scorer-greedy`, every search
# given 100 ms.
#
# Usage: experiments/scorer_memory_check.sh OLD_MODELS_DIR NEW_MODELS_DIR [OUT (default runs/scorer_memory_check)]
#   Each dir holds ptb.h5, nmt.h5, cifar10.h5.  Writes OUT/<family>/<graph>/d<D>_<cap>_s<seed>_{old,new}.csv
#   and prints the summary of experiments/summarize_scorer_memory.py.  About 5 minutes on 2
#   cores; run it alone (the budgets are times).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
[[ $# -ge 2 ]] || { echo "usage: $0 OLD_MODELS_DIR NEW_MODELS_DIR [OUT]" >&2; exit 2; }
old=$1 new=$2 out=${3:-runs/scorer_memory_check}
bin=${PLACETO_BIN:-build/bin}
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
for family in ptb nmt cifar10; do
  for m in "$old" "$new"; do
    [[ -f $m/$family.h5 ]] || { echo "scorer_memory_check.sh: no $m/$family.h5" >&2; exit 2; }
  done
  [[ -f $out/$family/graphs/manifest.json ]] ||
    "$bin/placeto" generate --family "$family" --count 4 --seed 6262 --out "$out/$family/graphs" > /dev/null
  for gfile in "$out/$family/graphs"/*.json; do
    [[ $(basename "$gfile") == manifest.json ]] && continue
    g=$(basename "$gfile" .json)
    dir=$out/$family/$g
    mkdir -p "$dir/graph"
    ln -sf "$root/$gfile" "$dir/graph/$g.json"
    # B: parameters plus peak activations of the single-device placement.
    bytes=$("$bin/placeto" place --graph "$gfile" --devices 1 --method single --out "$dir/single.json" |
      python3 -c 'import json,sys; j=json.load(sys.stdin); print(j["peak_mem_bytes"][0] + j["param_bytes"][0])')
    for d in 2 3 4; do
      for cap in none 1.2; do
        cluster=$dir/d${d}_$cap.yaml
        {
          echo "name: $g-d$d-$cap"
          echo "mode: compatible"
          echo "devices: $d"
          [[ $cap == none ]] || awk -v b="$bytes" -v f="$cap" -v d="$d" 'BEGIN { printf "memory_bytes: %.0f\n", f * b / d }'
        } > "$cluster"
        for seed in 1 2; do
          base=$dir/d${d}_${cap}_s$seed
          [[ -f ${base}_old.csv ]] ||
            "$bin/placeto" compare --graphs "$dir/graph" --cluster "$cluster" --seed "$seed" \
              --methods best,anneal,descent,policy-search,scorer-greedy --checkpoint "$old/$family.h5" \
              --time-ms 100 --out "${base}_old.csv" > /dev/null
          [[ -f ${base}_new.csv ]] ||
            "$bin/placeto" compare --graphs "$dir/graph" --cluster "$cluster" --seed "$seed" \
              --methods policy-search,scorer-greedy --checkpoint "$new/$family.h5" \
              --time-ms 100 --out "${base}_new.csv" > /dev/null
        done
      done
    done
    echo "$family $g done"
  done
done
python3 experiments/summarize_scorer_memory.py "$out"
