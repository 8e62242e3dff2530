#!/usr/bin/env bash
# One Placeto checkpoint on every device count (issue #34 item 3; experiments/RESULTS.md §9,
# "One network for any device count"): the runs of experiments/rl_no_teacher.sh with
# TAG (policies trained with policy.any_devices) place the held-out test graphs of their own
# family (generator seed 20 + s) zero-shot on 2, 3, 4, 8 and 16 k80 devices and on
# experiments/clusters/mixed_v100_k80.yaml, greedy, next to every classical placer; then, at
# 3 devices, every method is given the greedy policy's own placement time and 1000 ms
# (`placeto eval --equal-time policy,1000`, with the move scorer SCORER in the auto row), and
# `policy-search` alone is given the policy's time on each graph.
#
# Usage: experiments/any_devices_eval.sh FAMILY TAG [seeds (default "1 2 3")]
#   PLACETO_BIN=dir selects the executables; SCORER=models/nmt.h5 (default) the move scorer;
#   CLUSTERS="2 3 4 8 16 mixed_v100_k80" (default) the device counts and cluster files
#   (experiments/clusters/NAME.yaml) placed on.
# Writes runs/rl/<family>-<TAG>/devices/<cluster>/s<seed>.csv, each cluster's summary.md
# (summarize_eval.py), equal_time_s<seed>.csv, policy_search_s<seed>.csv and policy_search.md,
# and devices.md: per cluster, the greedy
# policy's step over the best classical placer's, geometric mean over the 4 test graphs,
# mean over the seeds.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
source launch/env.sh
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
family=${1:?usage: experiments/any_devices_eval.sh FAMILY TAG [seeds]}
tag=${2:?usage: experiments/any_devices_eval.sh FAMILY TAG [seeds]}
seeds=(${3:-1 2 3})
bin=${PLACETO_BIN:-build/bin}
scorer=${SCORER:-models/nmt.h5}
runs=runs/rl/$family-$tag
out=$runs/devices
clusters=(${CLUSTERS:-2 3 4 8 16 mixed_v100_k80})
for c in "${clusters[@]}"; do
  mkdir -p "$out/$c"
  for s in "${seeds[@]}"; do
    where=(--devices "$c")
    [[ $c =~ ^[0-9]+$ ]] || where=(--cluster "experiments/clusters/$c.yaml")
    csv=$out/$c/s$s.csv
    [[ -f $csv ]] || $bin/placeto eval --checkpoint "$runs/s$s/checkpoints/LATEST" \
      --graphs "runs/data/rl-$family-$((20 + s))" --split test --samples 1 --seed "$s" \
      "${where[@]}" --out "$csv" > "$out/$c/s$s.log" 2>&1
  done
  args=()
  for s in "${seeds[@]}"; do args+=("s$s=$out/$c/s$s.csv"); done
  /usr/bin/python3 experiments/summarize_eval.py --own-graphs "$out/$c/summary" "${args[@]}" > /dev/null
done
for s in "${seeds[@]}"; do
  csv=$out/equal_time_s$s.csv
  [[ -f $csv ]] || $bin/placeto eval --checkpoint "$runs/s$s/checkpoints/LATEST" \
    --graphs "runs/data/rl-$family-$((20 + s))" --split test --devices 3 --seed "$s" \
    --equal-time policy,1000 --search-checkpoint "$scorer" --out "$csv" > "$out/equal_time_s$s.log" 2>&1
done
# policy-search (the move scorer SCORER) given the greedy policy's own time on each graph,
# which --equal-time has no row for: graph, runtime_us, place_ms, the best classical step.
for s in "${seeds[@]}"; do
  csv=$out/policy_search_s$s.csv
  [[ -f $csv ]] && continue
  echo "graph,runtime_us,place_ms,best_classical_us" > "$csv.tmp"
  while IFS=, read -r graph ms best; do
    r=$($bin/placeto place --graph "runs/data/rl-$family-$((20 + s))/$graph.json" --devices 3 \
      --method policy-search --checkpoint "$scorer" --time-ms "$ms" --seed "$s" \
      --out "$out/policy_search.json" | /usr/bin/python3 -c \
      'import json,sys; d=json.load(sys.stdin); print("%s,%s" % (d["runtime_us"], d["place_ms"]))')
    echo "$graph,$r,$best" >> "$csv.tmp"
  done < <(/usr/bin/python3 - "$out/equal_time_s$s.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
best = {r["graph"]: r["runtime_us"] for r in rows if r["method"] == "best-classical"}
for r in rows:
    if r["method"] == "policy":
        print("%s,%s,%s" % (r["graph"], r["place_ms"], best[r["graph"]]))
PY
)
  mv "$csv.tmp" "$csv"
done
/usr/bin/python3 - "$out" "${seeds[@]}" <<'PY' | tee "$out/policy_search.md"
import csv, math, sys
out = sys.argv[1]
print("| seed | policy-search at the policy's time / best classical | policy / best classical | mean place_ms (policy-search) |")
print("|---|---|---|---|")
for s in sys.argv[2:]:
    ps = list(csv.DictReader(open("%s/policy_search_s%s.csv" % (out, s))))
    eq = list(csv.DictReader(open("%s/equal_time_s%s.csv" % (out, s))))
    pol = {r["graph"]: float(r["runtime_us"]) for r in eq if r["method"] == "policy"}
    g = lambda xs: math.exp(sum(map(math.log, xs)) / len(xs))
    a = g([float(r["runtime_us"]) / float(r["best_classical_us"]) for r in ps])
    b = g([pol[r["graph"]] / float(r["best_classical_us"]) for r in ps])
    ms = sum(float(r["place_ms"]) for r in ps) / len(ps)
    print("| %s | %.3f | %.3f | %.0f |" % (s, a, b, ms))
PY
{
  echo "| cluster | seeds | policy greedy / best classical (geomean over graphs, mean over seeds) | per seed | median place_ms |"
  echo "|---|---|---|---|---|"
  for c in "${clusters[@]}"; do
    row=$(grep '^| policy-greedy ' "$out/$c/summary.md" | head -1)
    ratio=$(cut -d'|' -f4 <<< "$row" | xargs)
    ms=$(cut -d'|' -f7 <<< "$row" | xargs)
    per=$(/usr/bin/python3 - "$out/$c" "${seeds[@]}" <<'PY'
import csv, math, sys
d = sys.argv[1]
vals = []
for s in sys.argv[2:]:
    rows = list(csv.DictReader(open("%s/s%s.csv" % (d, s))))
    best = {r["graph"]: float(r["runtime_us"]) for r in rows if r["method"] == "best-classical"}
    pol = [float(r["runtime_us"]) / best[r["graph"]] for r in rows
           if r["method"] == "policy-greedy" and r["feasible"] == "true"]
    vals.append("%.3f" % math.exp(sum(map(math.log, pol)) / len(pol)))
print(", ".join(vals))
PY
)
    echo "| $c | ${#seeds[@]} | $ratio | $per | $ms |"
  done
} | tee "$out/devices.md"
