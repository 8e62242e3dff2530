#!/usr/bin/env bash
# Issue #35's second bar, for a scorer trained on every family (experiments/configs/
# search_default.yaml): the bar of RESULTS §11 (policy-search given 100 ms over the better of
# anneal and descent given 100 ms, per family and device count) with the per-family scorers
# models/<family>.h5 and with one scorer for all, on COUNT (default 4) default-size graphs per
# family of a generator seed never used before (GRAPH_SEED, default 8383), at 2, 3 and 4 k80
# devices, search seeds 1-5.  Per (family, D, seed) one `placeto compare` runs anneal, descent
# and the per-family scorer's search, and the next one the default scorer's, on the same graphs and
# seed; run it alone, since the budgets are times.
#
# Usage: experiments/default_model_check.sh [DEFAULT (default models/default.h5)]
#   GRAPH_SEED=8383 OUT=runs/default_check T=100 PLACETO_BIN=build/bin COUNT=4 (graphs a family)
#   BUDGET=N gives every search N simulations (--budget) instead of T ms: no timing noise.
# Writes OUT/<family>-d<D>-s<seed>.csv and OUT/summary.md (printed): per cell the two ratios
# (geometric mean over graphs and seeds) and default / per-family.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
source launch/env.sh
default=${1:-models/default.h5}
[[ -f $default ]] || { echo "default_model_check.sh: $default: no such file" >&2; exit 2; }
bin=${PLACETO_BIN:-build/bin}
out=${OUT:-runs/default_check}
graph_seed=${GRAPH_SEED:-8383}
t=${T:-100}
effort=(--time-ms "$t")
[[ -n ${BUDGET:-} ]] && effort=(--budget "$BUDGET")
mkdir -p "$out"
for family in ptb nmt cifar10; do
  [[ -f $out/$family/graphs/manifest.json ]] ||
    $bin/placeto generate --family "$family" --count "${COUNT:-4}" --seed "$graph_seed" \
      --out "$out/$family/graphs" > /dev/null
  for d in 2 3 4; do
    for seed in 1 2 3 4 5; do
      csv=$out/$family-d$d-s$seed.csv
      [[ -f $csv ]] && continue
      $bin/placeto compare --graphs "$out/$family/graphs" --devices "$d" --seed "$seed" \
        --methods anneal,descent,policy-search --checkpoint "models/$family.h5" "${effort[@]}" \
        --out "$csv.family" > /dev/null
      $bin/placeto compare --graphs "$out/$family/graphs" --devices "$d" --seed "$seed" \
        --methods policy-search --checkpoint "$default" "${effort[@]}" \
        --out "$csv.default" > /dev/null
      { cat "$csv.family"; tail -n +2 "$csv.default" | sed 's/,policy-search,/,policy-search-default,/'; } > "$csv"
      rm "$csv.family" "$csv.default"
    done
    echo "$family D=$d done"
  done
done
/usr/bin/python3 - "$out" <<'PY' | tee "$out/summary.md"
import csv, glob, math, os, sys
out = sys.argv[1]
g = lambda xs: math.exp(sum(map(math.log, xs)) / len(xs))
print("| family | D | per-family scorer / better search | default scorer / better search | default / per-family | within 2%? |")
print("|---|---|---|---|---|---|")
worst = 0
for family in ("ptb", "nmt", "cifar10"):
    for d in (2, 3, 4):
        fam, dfl = [], []
        for path in sorted(glob.glob(os.path.join(out, "%s-d%d-s*.csv" % (family, d)))):
            rows = {}
            for r in csv.DictReader(open(path)):
                rows.setdefault(r["graph"], {})[r["method"]] = float(r["runtime_us"])
            for graph, m in rows.items():
                better = min(m["anneal"], m["descent"])
                fam.append(m["policy-search"] / better)
                dfl.append(m["policy-search-default"] / better)
        a, b = g(fam), g(dfl)
        worst = max(worst, b / a)
        print("| %s | %d | %.3f | %.3f | %.3f | %s |" % (family, d, a, b, b / a, "yes" if b / a <= 1.02 else "**no**"))
print("\nworst default / per-family: %.3f" % worst)
PY
