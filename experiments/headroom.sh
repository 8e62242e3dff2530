#!/usr/bin/env bash
# How much better than the 1 s searches a placement can be found at all (issue #35; RESULTS.md
# section 15): per graph of a compare CSV made at T ms (experiments/heldout_eval.sh's
# d<D>_t<T>_s<seed>.csv), anneal again with FACTORS times the simulations its T-ms run spent,
# and the step over the better of anneal and descent at T.  Budgets, not times, so the
# machine's load does not matter.
#
# Usage: [FACTORS="10 30"] [SEED] experiments/headroom.sh GRAPHS_DIR CSV OUT_TSV
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
[[ $# -eq 3 ]] || { echo "usage: $0 GRAPHS_DIR CSV OUT_TSV" >&2; exit 2; }
graphs=$1 csv=$2 out=$3
bin=${PLACETO_BIN:-build/bin}
read -r -a factors <<< "${FACTORS:-10 30}"
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
devices=$(awk -F, 'NR == 2 {print $3}' "$csv")
# The CSV's seed: SEED, else the _s<seed> of its name, else 1.
seed=${SEED:-$(basename "$csv" .csv | sed -n 's/.*_s\([0-9][0-9]*\).*/\1/p')}
seed=${seed:-1}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf 'graph\tdevices\tbar_us\tfactor\tbudget\tanneal_us\tratio\n' > "$tmp/out.tsv"
awk -F, '$2 == "anneal" {split($13, a, " "); print $1, a[1], $4} $2 == "descent" {print $1, "d", $4}' "$csv" |
  sort > "$tmp/rows"
for g in $(awk '{print $1}' "$tmp/rows" | sort -u); do
  sims=$(awk -v g="$g" '$1 == g && $2 != "d" {print $2}' "$tmp/rows")
  bar=$(awk -v g="$g" '$1 == g {if (b == "" || $3 < b) b = $3} END {print b}' "$tmp/rows")
  for f in "${factors[@]}"; do
    r=$("$bin/placeto" place --graph "$graphs/$g.json" --devices "$devices" --method anneal \
          --seed "$seed" --budget $((sims * f)) --out "$tmp/p.json" |
        python3 -c 'import json, sys; print(json.load(sys.stdin)["runtime_us"])')
    awk -v g="$g" -v d="$devices" -v b="$bar" -v f="$f" -v s=$((sims * f)) -v r="$r" \
      'BEGIN {printf "%s\t%s\t%s\t%s\t%s\t%s\t%.4f\n", g, d, b, f, s, r, r / b}' >> "$tmp/out.tsv"
  done
done
mkdir -p "$(dirname "$out")"
mv "$tmp/out.tsv" "$out"
cat "$out"
