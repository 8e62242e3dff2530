#!/usr/bin/env bash
# Faults during training under mpirun: a SIGKILLed rank, a hung rank (SIGSTOP) and a rank
# that exits 0 early each end the whole job within a bounded time with a message naming the
# rank, and --resume auto then continues from the last checkpoint; a full disk (RLIMIT_FSIZE)
# while writing a checkpoint keeps the old one and says so.
set -uo pipefail
# shellcheck source=SCRIPTDIR/../lib.sh
source "$(dirname "$0")/../lib.sh"
on_exit() { pkill -9 -f "$tmp/cfg.yaml" 2>/dev/null; }
"$py" "$src/tests/mpi/make_tiny_graphs.py" "$tmp" 3 24 9
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

# 2. and 3. A silent rank: rank 1 hangs (SIGSTOP after the first checkpoint) or leaves with
#    exit code 0 after iteration 3 (test hook; its MPI_Finalize then waits for the others).
#    Rank 0 must abort within collective_timeout_s (here 5 s; 60 s allowed for start-up and
#    load), naming rank 1 (the arrival monitor, common/comm/mpi/arrival_monitor.h).
timeout_s=5
silent_rank() {  # NAME HOW [mpirun args...]
  local name=$1 how=$2 run="$tmp/$1"
  shift 2
  mpirun --oversubscribe -np 2 "$@" "$bin/placeto_actor" --config "$tmp/cfg.yaml" \
    --run-dir "$run" collective_timeout_s=$timeout_s > "$tmp/$name.out" 2>&1 &
  local job=$! pid= start
  for _ in $(seq 1 600); do grep -qs "ckpt_" "$run/checkpoints/LATEST" && break; sleep 0.05; done
  pid=$(grep -o "pid [0-9]*" "$run/logs/rank_1.log" 2>/dev/null | head -1 | cut -d' ' -f2)
  start=$(date +%s)
  if [ "$how" = stop ]; then
    if [ -z "$pid" ]; then bad "$name: no pid for rank 1"; kill -9 $job; wait $job; return; fi
    kill -STOP "$pid"
  fi
  for _ in $(seq 1 600); do kill -0 $job 2>/dev/null || break; sleep 0.1; done
  local elapsed=$(( $(date +%s) - start ))
  if kill -0 $job 2>/dev/null; then
    bad "$name: job still running 60 s later"; kill -9 $job
  elif grep -qE "rank 1 (did not reach|reached) collective #[0-9]+ " "$tmp/$name.out"; then
    ok "$name: job stopped ${elapsed}s later (collective_timeout_s $timeout_s): $(grep -oE \
       'rank 1 (did not reach|reached) collective #[0-9]+ \([A-Za-z_()]*\) [a-z ]*' \
       "$tmp/$name.out" | head -1)"
  else
    bad "$name: job stopped but no message names rank 1"; cat "$tmp/$name.out"
  fi
  wait $job 2>/dev/null
  # Open MPI's daemon ends the ranks (a stopped one too) as it goes; allow it 15 s.
  for _ in $(seq 1 150); do [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    bad "$name: rank 1 (pid $pid) outlived the job by 15 s"; kill -9 "$pid"
  fi
  local last step
  last=$(cat "$run/checkpoints/LATEST" 2>/dev/null)
  step=$(sed -n 's/^ckpt_\([0-9]*\)\.h5$/\1/p' <<<"$last")
  if [ -n "$step" ] &&
     mpirun --oversubscribe -np 2 "$bin/placeto_actor" --config "$tmp/cfg.yaml" --run-dir "$run" \
       --resume auto iterations=$((step + 2)) > "$tmp/$name.resume.out" 2>&1 &&
     grep -q "resuming from .*$last" "$run/logs/rank_0.log" &&
     grep -q "training done: $((step + 2)) iterations" "$run/logs/rank_0.log"; then
    ok "$name: --resume auto continued from $last to iteration $((step + 2))"
  else
    bad "$name: resume"; cat "$tmp/$name.resume.out"
  fi
}
silent_rank hang stop
silent_rank exit0 exit -x PLACETO_TEST_EXIT_AT_ITERATION=1:3

# 4. A full disk while writing a checkpoint: the old one stays and the error says so.  (The
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
finish faults_test
