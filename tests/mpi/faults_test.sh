#!/usr/bin/env bash
# Faults during training under mpirun: a SIGKILLed rank ends the whole job within a bounded
# time with a message naming the rank, and --resume auto then continues from the last
# checkpoint; a full disk (RLIMIT_FSIZE) while writing a checkpoint keeps the old one and
# says so.
set -uo pipefail
bin=$1
src=$2
source "$src/launch/env.sh"
tmp=$(mktemp -d)
trap 'pkill -9 -f "$tmp/cfg.yaml" 2>/dev/null; rm -rf "$tmp"' EXIT
passed=0
failed=0
ok() { echo "PASS: $*"; passed=$((passed + 1)); }
bad() { echo "FAIL: $*"; failed=$((failed + 1)); }
/usr/bin/python3 "$src/tests/mpi/make_tiny_graphs.py" "$tmp" 3 24 9
cat > "$tmp/cfg.yaml" <<Y
family_dir: $tmp
devices: 2
iterations: 400
episodes_per_iteration: 2
checkpoint_every: 2
collective_timeout_s: 20
policy: {hidden: 8, rounds: 2}
Y

# 1. SIGKILL rank 1 after the first checkpoint.
mpirun --oversubscribe -np 2 "$bin/placeto_actor" --config "$tmp/cfg.yaml" --run-dir "$tmp/run" \
  > "$tmp/kill.out" 2>&1 &
job=$!
for _ in $(seq 1 600); do grep -qs "ckpt_" "$tmp/run/checkpoints/LATEST" && break; sleep 0.05; done
pid=$(grep -o "pid [0-9]*" "$tmp/run/logs/rank_1.log" 2>/dev/null | head -1 | cut -d' ' -f2)
if [ -z "$pid" ]; then
  bad "no pid for rank 1"; kill -9 $job 2>/dev/null
else
  start=$(date +%s)
  kill -9 "$pid"
  for _ in $(seq 1 600); do kill -0 $job 2>/dev/null || break; sleep 0.1; done
  elapsed=$(( $(date +%s) - start ))
  if kill -0 $job 2>/dev/null; then
    bad "job still running 60 s after rank 1 was killed"; kill -9 $job
  elif grep -qiE "rank 1" "$tmp/kill.out"; then
    ok "job stopped ${elapsed}s after rank 1 was SIGKILLed, naming rank 1"
  else
    bad "job stopped but the message does not name rank 1"; cat "$tmp/kill.out"
  fi
fi
wait $job 2>/dev/null
last=$(cat "$tmp/run/checkpoints/LATEST" 2>/dev/null)
if mpirun --oversubscribe -np 2 "$bin/placeto_actor" --config "$tmp/cfg.yaml" --run-dir "$tmp/run" \
     --resume auto iterations=12 > "$tmp/resume.out" 2>&1 &&
   grep -q "resuming from .*${last%$'\n'}" "$tmp/run/logs/rank_0.log"; then
  ok "--resume auto continued from $last after the crash"
else
  bad "resume after the crash"; cat "$tmp/resume.out"
fi

# 2. A full disk while writing a checkpoint: the old one stays and the error says so.  (The
#    single-process `placeto train` runs the same code; under mpirun the file-size limit would
#    also hit Open MPI's own session files.)
mkdir -p "$tmp/disk"
"$bin/placeto" train --config "$tmp/cfg.yaml" --run-dir "$tmp/disk" iterations=2 checkpoint_every=2 \
  > /dev/null 2>&1
before=$(cat "$tmp/disk/checkpoints/LATEST")
( ulimit -f 12; trap '' XFSZ; exec "$bin/placeto" train --config "$tmp/cfg.yaml" --run-dir "$tmp/disk" \
    --resume auto iterations=4 checkpoint_every=2 ) > "$tmp/disk.out" 2>&1
rc=$?
if [ $rc -ne 0 ] && grep -q "previous checkpoint and LATEST are unchanged" "$tmp/disk.out" &&
   [ "$(cat "$tmp/disk/checkpoints/LATEST")" = "$before" ] &&
   "$bin/placeto" ckpt-info "$tmp/disk/checkpoints/$before" > /dev/null; then
  ok "disk full: exit $rc, LATEST still $before and intact"
else
  bad "disk full handling (exit $rc)"; cat "$tmp/disk.out"
fi
echo "faults_test: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
