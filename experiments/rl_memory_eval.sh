#!/usr/bin/env bash
# The Placeto policies of experiments/rl_no_teacher.sh on capped clusters (issue #33 item 3):
# each held-out test graph of the seed's family (generator seed 20 + s) on D devices whose
# capacity is f x the balanced share, memory_bytes = f x (the graph's single-device bytes) / D,
# placed by the policy's greedy episode (the run's final checkpoint, or CHECKPOINT) and by
# `best` (the best fast classical placer).  One line per graph: whether each fits, its step,
# and the policy's step over best's.
#
# Usage: experiments/rl_memory_eval.sh FAMILY [seeds (default "1 2 3")]
#   FACTOR=1.2 DEVICES=3; runs of TAG=name (runs/rl/<family>[-TAG]/s<seed>); CHECKPOINT=path
#   places every seed's graphs with one checkpoint instead (e.g. models/placeto_rl_ptb.h5).
#   Needs the families of rl_no_teacher.sh (runs/data/rl-<family>-<20 + s>).
#   Writes runs/rl/<family>[-TAG]/memory_f<FACTOR>[-<checkpoint name>].tsv and prints a summary.
set -euo pipefail
cd "$(dirname "$0")/.."
source launch/env.sh > /dev/null
family=${1:?usage: experiments/rl_memory_eval.sh FAMILY [seeds]}
seeds=(${2:-1 2 3})
factor=${FACTOR:-1.2}
devices=${DEVICES:-3}
bin=${PLACETO_BIN:-build/bin}
out=runs/rl/$family${TAG:+-$TAG}
tsv=$out/memory_f$factor${CHECKPOINT:+-$(basename "${CHECKPOINT%.h5}")}.tsv
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
json() { /usr/bin/python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"; }

mkdir -p "$out"
printf 'seed\tgraph\tcapacity\tpolicy_fits\tpolicy_us\tbest_fits\tbest_us\tratio\n' > "$tsv"
for s in "${seeds[@]}"; do
  data=runs/data/rl-$family-$((20 + s))
  ckpt=${CHECKPOINT:-$out/s$s/checkpoints/LATEST}
  [[ -f $data/manifest.json ]] || { echo "no $data: run experiments/rl_no_teacher.sh first" >&2; exit 2; }
  for g in $(json "$data/manifest.json" "' '.join(d['test'])"); do
    "$bin/placeto" place --graph "$data/$g" --devices 1 --method single --out "$tmp/single.json" \
      > "$tmp/single.out"
    cap=$(json "$tmp/single.out" \
      "'%.0f' % max(1, int($factor * (sum(d['peak_mem_bytes']) + sum(d['param_bytes'])) / $devices))")
    printf 'name: capped\nmode: compatible\ndevices: %s\nmemory_bytes: %s\n' "$devices" "$cap" \
      > "$tmp/cluster.yaml"
    # place exits 1 when the placement does not fit; that is a result, not an error.
    rc=0
    "$bin/placeto" place --graph "$data/$g" --cluster "$tmp/cluster.yaml" --method policy \
      --checkpoint "$ckpt" --seed "$s" --out "$tmp/p.json" > "$tmp/policy.out" 2> "$tmp/err" || rc=$?
    ((rc <= 1)) || { cat "$tmp/err" >&2; exit 1; }
    rc=0
    "$bin/placeto" place --graph "$data/$g" --cluster "$tmp/cluster.yaml" --method best \
      --seed "$s" --out "$tmp/b.json" > "$tmp/best.out" 2> "$tmp/err" || rc=$?
    ((rc <= 1)) || { cat "$tmp/err" >&2; exit 1; }
    pf=$(json "$tmp/policy.out" "int(d['feasible'])") pu=$(json "$tmp/policy.out" "d['runtime_us']")
    bf=$(json "$tmp/best.out" "int(d['feasible'])") bu=$(json "$tmp/best.out" "d['runtime_us']")
    printf '%s\t%s\t%s\t%s\t%.1f\t%s\t%.1f\t%.4f\n' "$s" "$g" "$cap" "$pf" "$pu" "$bf" "$bu" \
      "$(/usr/bin/python3 -c "print($pu / $bu)")" >> "$tsv"
  done
done
/usr/bin/python3 - "$tsv" << 'PY'
import csv, math, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
fit = [r for r in rows if r["policy_fits"] == "1"]
both = [r for r in fit if r["best_fits"] == "1"]
gm = math.exp(sum(math.log(float(r["ratio"])) for r in both) / len(both)) if both else float("nan")
print(f"{sys.argv[1]}: policy fits {len(fit)}/{len(rows)}, best fits "
      f"{sum(r['best_fits'] == '1' for r in rows)}/{len(rows)}; where both fit "
      f"({len(both)}), policy step / best step: geometric mean {gm:.3f}")
PY
