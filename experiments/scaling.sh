#!/usr/bin/env bash
# Strong-ish scaling of the MPI trainer on this machine: the same per-rank work (k episodes
# per rank and iteration on the 90-op PTB family) with 1, 2 and 4 ranks; prints episodes/s,
# per-rank efficiency against 1 rank and the all-reduce share of iteration time, from each
# run's metrics.csv (iterations after the first 5, to skip warm-up).
# Usage: experiments/scaling.sh [iterations (default 40)] [ranks... (default 1 2 4)]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
source launch/env.sh
iters=${1:-40}
shift || true
ranks=("$@")
((${#ranks[@]})) || ranks=(1 2 4)
fam=runs/data/ptb90
[[ -f $fam/manifest.json ]] || build/bin/placeto generate --family ptb --count 24 --seed 7 \
  --out "$fam" --test 8 --steps 4 --layers 1 --cell-nodes 6 > /dev/null
out=runs/scaling
rm -rf "$out"
printf "%-6s %12s %14s %12s %14s\n" ranks episodes/s per-rank-eff allreduce% iteration-ms
base=""
for n in "${ranks[@]}"; do
  mpirun --oversubscribe -np "$n" build/bin/placeto_actor \
    --config experiments/configs/quickstart.yaml --run-dir "$out/np$n" "family_dir=$fam" \
    "iterations=$iters" episodes_per_iteration=2 checkpoint_every=1000 seed=1 imitation_iterations=0 \
    > "$out.np$n.log" 2>&1
  read -r eps share ms < <(/usr/bin/python3 - "$out/np$n/metrics.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))[5:]
# iteration seconds = episodes in the iteration / episodes_per_s
eps_total = 0.0
t_total = 0.0
ar = 0.0
prev = None
for r in list(csv.DictReader(open(sys.argv[1]))):
    e = int(r["episodes"])
    if prev is not None and int(r["iteration"]) > 5:
        de = e - prev
        t = de / float(r["episodes_per_s"])
        eps_total += de
        t_total += t
        ar += float(r["allreduce_s"])
    prev = e
print(f"{eps_total / t_total:.3f} {100 * ar / t_total:.2f} {1000 * t_total / max(1, len(rows)):.1f}")
PY
  )
  [[ -z $base ]] && base=$eps
  eff=$(/usr/bin/python3 -c "print(f'{$eps / ($n * $base) * 100:.1f}%')")
  printf "%-6s %12s %14s %12s %14s\n" "$n" "$eps" "$eff" "$share" "$ms"
done
