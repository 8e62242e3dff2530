#!/usr/bin/env bash
# The ablation of issue #34 item 1: on the same coarse graph of 64 groups (`placeto coarsen
# --groups 64`, the coarsening the policy uses), the Placeto policy's coarse placement (random
# start, `env.start=fixed_random`) against `best`'s placement of the groups, both mapped back
# to every op, without op-level steps (policy.boundary_sims=0) and, for the policy, with the
# boundary pass (4096).  Graphs: gpt12, gpt48 (runs/zoo) and the ptb graphs of about 5k and 20k
# ops of experiments/graph_scale.sh; 4 k80 devices.  Checkpoints: the random-start any-device
# run (runs/rl/ptb-any/s1, RESULTS §9) and the shipped models/placeto_rl_ptb.h5 given a random
# start.
# Usage: experiments/hierarchy_ablation.sh   (PLACETO_BIN=dir; OUT=runs/ablation)
# Writes OUT/ablation.tsv (graph, ops, variant, step_us, best_us: `best` on the whole graph)
# and prints each variant's step over best's.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
source launch/env.sh
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
bin=${PLACETO_BIN:-build/bin}
out=${OUT:-runs/ablation}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$out"
printf "graph\tops\tvariant\tstep_us\tbest_us\n" > "$out/ablation.tsv"
step() { /usr/bin/python3 -c 'import json,sys; d=json.load(sys.stdin); print(d.get("fine", d)["runtime_us"])'; }
checkpoints=("runs/rl/ptb-any/s1/checkpoints/ckpt_400.h5=random-start policy"
             "models/placeto_rl_ptb.h5=shipped policy, random start")
for name in gpt12 gpt48 ptb_5k ptb_20k; do
  case $name in
    gpt*) g=runs/zoo/$name.json ;;
    *) g=runs/graph_scale/graphs/$name/ptb_0.json ;;
  esac
  [[ -f $g ]] || { echo "hierarchy_ablation.sh: $g is missing (import_zoo.sh, graph_scale.sh)" >&2; exit 2; }
  ops=$(/usr/bin/python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["nodes"]))' "$g")
  best=$($bin/placeto place --graph "$g" --devices 4 --method best --out "$tmp/b.json" | step)
  $bin/placeto coarsen --graph "$g" --groups 64 --out "$tmp/c.json" --map "$tmp/m.json" > /dev/null
  cb=$($bin/placeto place --graph "$tmp/c.json" --devices 4 --method best --ungroup "$g" \
    --map "$tmp/m.json" --out "$tmp/cb.json" | step)
  printf "%s\t%s\t%s\t%s\t%s\n" "$name" "$ops" "best on the 64 groups" "$cb" "$best" >> "$out/ablation.tsv"
  for entry in "${checkpoints[@]}"; do
    ckpt=${entry%%=*} label=${entry#*=}
    [[ -f $ckpt ]] || { echo "hierarchy_ablation.sh: $ckpt is missing" >&2; exit 2; }
    for sims in 0 4096; do
      r=$($bin/placeto place --graph "$g" --devices 4 --method policy --checkpoint "$ckpt" \
        --checkpoint-set env.start=fixed_random --checkpoint-set policy.coarse_above=512 \
        --checkpoint-set policy.coarse_groups=64 --checkpoint-set "policy.boundary_sims=$sims" \
        --out "$tmp/p.json" | step)
      printf "%s\t%s\t%s\t%s\t%s\n" "$name" "$ops" "$label, boundary_sims=$sims" "$r" "$best" >> "$out/ablation.tsv"
    done
  done
done
/usr/bin/python3 - "$out/ablation.tsv" <<'PY'
import csv, sys
for r in csv.DictReader(open(sys.argv[1]), delimiter="\t"):
    print("%-8s %6s  %-45s %.3f" % (r["graph"], r["ops"], r["variant"],
                                     float(r["step_us"]) / float(r["best_us"])))
PY
