#!/usr/bin/env bash
# The 64-rank oversubscribed smoke run (label `slow`, not in the default tests): 64 actors on
# this machine's cores, 3 iterations, identical parameters at the end.
set -euo pipefail
# shellcheck source=SCRIPTDIR/../lib.sh
source "$(dirname "$0")/../lib.sh"
"$py" "$src/tests/mpi/make_tiny_graphs.py" "$tmp" 8 24 3
cat > "$tmp/cfg.yaml" <<Y
family_dir: $tmp
devices: 2
iterations: 3
checkpoint_every: 3
policy: {hidden: 8, rounds: 2}
Y
start=$(date +%s)
mpirun --oversubscribe -np 64 "$bin/placeto_actor" --config "$tmp/cfg.yaml" --run-dir "$tmp/run"
grep -q "parameters identical on all 64 ranks at iteration 3" "$tmp/run/logs/rank_0.log"
echo "smoke64: 64 ranks, 3 iterations in $(( $(date +%s) - start )) s; parameters identical"
echo "smoke64: 1 passed, 0 failed"
