#!/usr/bin/env bash
# Memory-bound models (issue #33 item 5; experiments/RESULTS.md "Memory-bound models"): every
# zoo model (experiments/zoo/) on D k80 devices whose capacity is f x the balanced share,
# memory_bytes = f x (the model's single-device bytes) / D, placed by every fast classical
# placer and by the searches anneal, chain-anneal, descent, auto (no checkpoint) and policy-search (the
# move scorer models/ptb.h5), each search given T ms of placement time, with several seeds.
#
# Usage: experiments/memory_zoo.sh
#   The grid is set by the environment (defaults: the whole grid of the issue):
#     MODELS="gpt12 gpt48 resnet152 inception_v3 googlenet vit_b_16"  DEVICES="2 4 8"
#     FACTORS="1.05 1.2 1.5"  TIMES="1000 3000"  SEEDS="1 2 3"
#     SEARCHES="anneal chain-anneal descent auto"  POLICY_SEARCH=1 (0: leave policy-search out)
#   PLACETO_BIN=build-notorch/bin selects the executables (default build/bin).
#   SCORER=models/cifar10.h5 picks policy-search's move scorer (default models/ptb.h5);
#   AUTO_SCORER=1 gives it to `auto` as well (compare --checkpoint); OUT=runs/X writes there
#   instead of runs/memory_zoo.
#   Needs runs/zoo/<model>.json and runs/zoo/summary.tsv (experiments/zoo/import_zoo.sh).
#   Per cell: runs/memory_zoo/<model>/d<D>_f<f>/cluster.yaml, and per seed and T:
#     s<seed>_t<T>.csv  `placeto compare` of the fast placers, best and SEARCHES
#     s<seed>_t<T>.policy-search.json  `placeto place --method policy-search`
#   Cells already measured are kept (delete the file to measure again). At the end
#   summarize_memory_zoo.py writes runs/memory_zoo/results.csv and summary.md.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bin=${PLACETO_BIN:-build/bin}
zoo=runs/zoo
out=${OUT:-runs/memory_zoo}
scorer=${SCORER:-models/ptb.h5}
# Without AUTO_SCORER, auto runs without a model (as in RESULTS.md section 12, before the
# default model existed).
auto_ckpt=(--checkpoint none)
[[ ${AUTO_SCORER:-0} == 1 ]] && auto_ckpt=(--checkpoint "$scorer")
read -r -a models <<< "${MODELS:-gpt12 gpt48 resnet152 inception_v3 googlenet vit_b_16}"
read -r -a devices <<< "${DEVICES:-2 4 8}"
read -r -a factors <<< "${FACTORS:-1.05 1.2 1.5}"
read -r -a times <<< "${TIMES:-1000 3000}"
read -r -a seeds <<< "${SEEDS:-1 2 3}"
searches=${SEARCHES:-anneal chain-anneal descent auto}
fast=single,random,round-robin,expert,metis,heft,m-etf,m-sct,m-topo,partition,best
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1

fail() { echo "memory_zoo.sh: $*" >&2; exit 2; }
[[ -f $zoo/summary.tsv ]] || fail "run experiments/zoo/import_zoo.sh first"
single_bytes() { awk -F'\t' -v m="$1" '$1 == m { print $3 }' "$zoo/summary.tsv"; }

for m in "${models[@]}"; do
  bytes=$(single_bytes "$m")
  [[ -n $bytes && -f $zoo/$m.json ]] || fail "$m is not imported (import_zoo.sh $m)"
  # compare reads a directory of graphs: one per model.
  mkdir -p "$out/$m/graph"
  ln -sf "$root/$zoo/$m.json" "$out/$m/graph/$m.json"
  for d in "${devices[@]}"; do
    for f in "${factors[@]}"; do
      cell=$out/$m/d${d}_f$f
      mkdir -p "$cell"
      cap=$(awk -v b="$bytes" -v f="$f" -v d="$d" 'BEGIN { printf "%.0f", f * b / d }')
      cat > "$cell/cluster.yaml" << EOF
# $m on $d k80 devices of $f x its single-device bytes ($bytes) / $d
name: ${m}-d$d-f$f
mode: compatible
devices: $d
memory_bytes: $cap
EOF
      for s in "${seeds[@]}"; do
        for t in "${times[@]}"; do
          csv=$cell/s${s}_t$t.csv
          if [[ ! -f $csv ]]; then
            "$bin/placeto" compare --graphs "$out/$m/graph" --cluster "$cell/cluster.yaml" \
              --methods "$fast,${searches// /,}" --time-ms "$t" --seed "$s" --out "$csv" "${auto_ckpt[@]}" \
              > "${csv%.csv}.log" 2>&1 || { cat "${csv%.csv}.log" >&2; exit 1; }
          fi
          ps=$cell/s${s}_t$t.policy-search.json
          if [[ ${POLICY_SEARCH:-1} == 1 && ! -f $ps ]]; then
            # place exits 1 when the placement does not fit; that is a result, not an error.
            rc=0
            "$bin/placeto" place --graph "$zoo/$m.json" --cluster "$cell/cluster.yaml" \
              --method policy-search --checkpoint "$scorer" --time-ms "$t" --seed "$s" \
              --out "${ps%.json}.placement.json" > "$ps.tmp" 2> "${ps%.json}.log" || rc=$?
            ((rc <= 1)) || { cat "${ps%.json}.log" >&2; exit 1; }
            mv "$ps.tmp" "$ps"
          fi
          echo "$m D=$d f=$f seed $s T=${t}ms done"
        done
      done
    done
  done
done
python3 experiments/summarize_memory_zoo.py "$out"
