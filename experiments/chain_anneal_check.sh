#!/usr/bin/env bash
# chain-anneal against anneal away from the memory-bound zoo (experiments/RESULTS.md §12,
# "Where memory does not bind"): generated graphs of the three families (generator seed 404,
# never used for tuning) and linalg task graphs, on default k80 clusters without a memory cap
# (D = 3) and capped at 1.2 x the balanced share (D = 4), `placeto compare` of anneal,
# chain-anneal and auto at --time-ms T (default 100), seeds 1-3.
# Usage: experiments/chain_anneal_check.sh [out_dir]   (default <repository>/runs/chain_anneal_check)
#   PLACETO_BIN=dir selects the executables (default build/bin); T=ms the placement time;
#   GEN_SEED=s the generator seed of the graphs (default 404).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# out_dir is taken from the caller's directory; the default is under the repository.
out=${1:-$root/runs/chain_anneal_check}
[[ $out == /* ]] || out=$PWD/$out
cd "$root"
bin=${PLACETO_BIN:-build/bin}
t=${T:-100}
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
mkdir -p "$out"
for fam in ptb nmt cifar10 linalg; do
  [[ -d $out/$fam ]] || "$bin/placeto" generate --family "$fam" --count 3 --test 0 --seed "${GEN_SEED:-404}" \
    --out "$out/$fam" > /dev/null
done
# Each graph gets its own capped cluster: 1.2 x its own balanced share.
for fam in ptb nmt cifar10 linalg; do
  for g in "$out/$fam"/*.json; do
    [[ $(basename "$g") == manifest.json ]] && continue
    name=$(basename "$g" .json)
    dir=$out/runs/$fam/$name
    mkdir -p "$dir/graph"
    ln -sf "$g" "$dir/graph/$name.json"
    # single-device bytes: peak activations + parameters of the single placement
    "$bin/placeto" place --graph "$g" --devices 1 --method single --out "$dir/single.json" \
      > /dev/null
    bytes=$("$bin/placeto" sim --graph "$g" --placement "$dir/single.json" |
      jq -r '.peak_mem_bytes[0] + .param_bytes[0]')
    cap=$(awk -v b="$bytes" 'BEGIN { printf "%.0f", 1.2 * b / 4 }')
    printf 'name: %s-d4-f1.2\nmode: compatible\ndevices: 4\nmemory_bytes: %s\n' "$name" "$cap" \
      > "$dir/capped.yaml"
    for s in 1 2 3; do
      [[ -f $dir/d3_s$s.csv ]] || "$bin/placeto" compare --graphs "$dir/graph" --devices 3 \
        --methods anneal,chain-anneal,auto --checkpoint none --time-ms "$t" --seed "$s" --out "$dir/d3_s$s.csv" 2> "$dir/d3_s$s.log" \
        > /dev/null
      [[ -f $dir/d4cap_s$s.csv ]] || "$bin/placeto" compare --graphs "$dir/graph" \
        --cluster "$dir/capped.yaml" --methods anneal,chain-anneal,auto --checkpoint none --time-ms "$t" \
        --seed "$s" --out "$dir/d4cap_s$s.csv" 2> "$dir/d4cap_s$s.log" > /dev/null
    done
    echo "$fam $name done"
  done
done
