#!/usr/bin/env bash
# The SLURM templates end to end on a real single-node SLURM: starts munge, slurmctld and slurmd
# in a temporary directory (own key, socket, ports, state; no systemd), submits
# launch/slurm/train_mpirun.sbatch (and train_srun.sbatch where srun has PMIx) with the
# quickstart config on a tiny family, preempts the job with `scancel --signal=USR1 --batch`
# after its first checkpoint, and checks that the job requeued itself, resumed from the
# checkpoint and finished; then that the restart cap makes a preempted job fail instead.
# Stops the daemons it started, by pid, and removes the directory, also on failure.
#
# Usage: tests/slurm/slurm_test.sh BIN_DIR      (BIN_DIR holds placeto and placeto_actor)
# Skips (exit 0) where the SLURM or munge packages are not installed.
# PLACETO_SLURM_TEST_KEEP=1 keeps the temporary directory for inspection.
# shellcheck disable=SC2317  # functions run from traps and wait_for
set -uo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
bin=${1:?usage: slurm_test.sh BIN_DIR}
passed=0
failed=0

# fd 3: the test's own output, also from traps that fire while a wait_for condition runs
# with its output sent to /dev/null.
exec 3>&1
say() { echo "slurm_test: $*" >&3; }
pass() {
  passed=$((passed + 1))
  say "PASS: $*"
}
fail() {
  failed=$((failed + 1))
  say "FAIL: $*"
}
finish() {
  say "$passed passed, $failed failed"
  ((failed == 0)) && exit 0
  exit 1
}

for tool in munged slurmctld slurmd sbatch scontrol squeue sinfo scancel srun; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    say "SKIP: $tool is not installed (Debian: slurm-wlm slurmctld slurmd slurm-client munge)"
    exit 0
  fi
done
if [[ $(id -u) != 0 ]]; then
  say "SKIP: needs root (slurmd launches the jobs)"
  exit 0
fi
# Settings of an enclosing SLURM job or site (SBATCH_PARTITION, SLURM_JOB_ID, ...) must not
# leak into the test cluster's jobs.
for var in $(compgen -e); do
  [[ $var =~ ^(SLURM|SBATCH|SALLOC|SRUN|SQUEUE|SINFO|SCONTROL|SCANCEL)_ ]] && unset "$var"
done
unset PLACETO_ROOT PLACETO_BIN PLACETO_CONFIG PLACETO_RUN_DIR PLACETO_OVERRIDES PLACETO_MAX_RESTARTS \
  PLACETO_SRUN_MPI PLACETO_MPIRUN_ARGS
bin=$(cd "$bin" 2>/dev/null && pwd) || {
  fail "$1: no such directory"
  finish
}
for exe in placeto placeto_actor; do
  if [[ ! -x $bin/$exe ]]; then
    fail "$bin/$exe is not built"
    finish
  fi
done
py=/usr/bin/python3
[[ -x $py ]] || py=python3

# Short path: the munge socket's path must fit in a sockaddr_un.
tmp=$(mktemp -d /tmp/placeto-slurm.XXXXXX)
chmod 711 "$tmp"
mkdir -p "$tmp/munge" "$tmp/state" "$tmp/spool" "$tmp/log"
chmod 711 "$tmp/munge"
daemon_pids=()  # started in this order; stopped in reverse

# Dumps what explains a failure (while the files still exist).
show_logs() {
  local f
  for f in "$tmp"/job_*.out "$tmp/log/slurmctld.log" "$tmp/log/slurmd.log" "$tmp"/run_*/logs/rank_0.log; do
    [[ -f $f ]] || continue
    echo "----- last lines of $f"
    tail -n 25 "$f"
  done
}

cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  if ((failed > 0)); then show_logs >&3 2>&3; fi
  if [[ -n ${SLURM_CONF:-} ]] && ((${#daemon_pids[@]} >= 2)); then
    # Jobs first, so that no trainer outlives its slurmd.
    scancel --quiet --full --user=root 2>/dev/null
    local i
    for ((i = 0; i < 30; i++)); do
      [[ -z $(squeue -h -o %i 2>/dev/null) ]] && break
      sleep 0.5
    done
  fi
  local k pid
  for ((k = ${#daemon_pids[@]} - 1; k >= 0; k--)); do
    pid=${daemon_pids[k]}
    kill -TERM "$pid" 2>/dev/null || continue
    for ((i = 0; i < 50; i++)); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.2
    done
    kill -KILL "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
  done
  if [[ ${PLACETO_SLURM_TEST_KEEP:-0} == 1 ]]; then
    say "kept $tmp"
  else
    rm -rf "$tmp"
  fi
  exit "$rc"
}
trap cleanup EXIT
trap 'fail "interrupted"; finish' INT TERM

# wait_for SECONDS WHAT COMMAND...: polls COMMAND every 0.25 s until it succeeds.
wait_for() {
  local limit=$1 what=$2 t0=$SECONDS
  shift 2
  while ! "$@" >/dev/null 2>&1; do
    if ((SECONDS - t0 >= limit)); then
      fail "timed out after ${limit}s waiting for $what"
      return 1
    fi
    sleep 0.25
  done
}

# ---------------------------------------------------------------- the cluster
free_ports() {
  "$py" - <<'PY'
import socket
socks = [socket.socket() for _ in range(2)]
for s in socks:
    s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in socks))
PY
}
read -r ctld_port slurmd_port < <(free_ports)
node=$(hostname -s)
sock=$tmp/munge/munge.sock

if command -v mungekey >/dev/null 2>&1; then
  mungekey --create --keyfile="$tmp/munge/munge.key" || exit 1
else
  dd if=/dev/urandom of="$tmp/munge/munge.key" bs=1024 count=1 status=none
fi
chmod 400 "$tmp/munge/munge.key"
munged --foreground --force --socket="$sock" --key-file="$tmp/munge/munge.key" \
  --pid-file="$tmp/munge/munged.pid" --seed-file="$tmp/munge/seed" \
  --log-file="$tmp/log/munged.log" >"$tmp/log/munged.out" 2>&1 &
daemon_pids+=($!)
wait_for 10 "munged's socket" test -S "$sock" || finish

# cred_expire: a requeued job waits this long (+ a few s) before it may start again.
# sched_interval=1: pending jobs are looked at every second instead of every minute.
cat >"$tmp/slurm.conf" <<EOF
ClusterName=placetotest
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$sock,cred_expire=5
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/log/slurmctld.log
SlurmdLogFile=$tmp/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
PlugStackConfig=$tmp/plugstack.conf
MailProg=/bin/true
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/builtin
SchedulerParameters=sched_interval=1
MpiDefault=none
JobRequeue=1
ReturnToService=2
KillWait=5
MinJobAge=600
SlurmdParameters=config_overrides
NodeName=$node NodeAddr=127.0.0.1 CPUs=2 State=UNKNOWN
PartitionName=test Nodes=$node Default=YES MaxTime=INFINITE State=UP
EOF
: >"$tmp/plugstack.conf"
export SLURM_CONF=$tmp/slurm.conf

slurmctld -D -f "$SLURM_CONF" >"$tmp/log/slurmctld.out" 2>&1 &
daemon_pids+=($!)
ctld_up() { scontrol ping | grep -q UP; }
wait_for 30 "slurmctld to answer" ctld_up || finish
slurmd -D -f "$SLURM_CONF" -N "$node" >"$tmp/log/slurmd.out" 2>&1 &
daemon_pids+=($!)
node_idle() { [[ $(sinfo -h -n "$node" -o %T) == idle ]]; }
if wait_for 30 "node $node to be idle" node_idle; then
  pass "munged, slurmctld and slurmd are up (node $node idle)"
else
  finish
fi

# ---------------------------------------------------------------- the jobs
family=$tmp/family
if ! "$bin/placeto" generate --family ptb --count 3 --seed 1 --out "$family" --test 1 \
  --steps 3 --layers 1 --width 16 >"$tmp/log/generate.out" 2>&1; then
  cat "$tmp/log/generate.out"
  fail "placeto generate failed"
  finish
fi
iters=${PLACETO_SLURM_TEST_ITERATIONS:-24}

job_field() { scontrol show job "$1" 2>/dev/null | tr ' ' '\n' | sed -n "s/^$2=//p" | head -n 1; }
job_running() { [[ $(job_field "$1" JobState) == RUNNING ]]; }
job_started() { job_running "$1" || job_ended "$1"; }
checkpointed_or_ended() { [[ -f $tmp/run_$1/checkpoints/LATEST ]] || job_ended "$2"; }
job_restarted() { [[ $(job_field "$1" Restarts) -ge 1 ]] && job_running "$1"; }
job_ended() {
  case $(job_field "$1" JobState) in
    COMPLETED | FAILED | CANCELLED | TIMEOUT | NODE_FAIL | OUT_OF_MEMORY | BOOT_FAIL | DEADLINE) return 0 ;;
  esac
  return 1
}
ckpt_step() { "$bin/placeto" ckpt-info "$1" | "$py" -c 'import json,sys; print(json.load(sys.stdin)["meta"]["step"])'; }

# submit NAME TEMPLATE MAX_RESTARTS: submits with 2 ranks, prints the job id.
submit() {
  local name=$1 template=$2 max=$3
  PLACETO_ROOT=$root PLACETO_BIN=$bin PLACETO_RUN_DIR=$tmp/run_$name \
    PLACETO_CONFIG=$root/experiments/configs/quickstart.yaml PLACETO_MAX_RESTARTS=$max \
    PLACETO_OVERRIDES="family_dir=$family iterations=$iters checkpoint_every=2" \
    OMPI_MCA_mpi_yield_when_idle=1 \
    sbatch --parsable --job-name="placeto-$name" --nodes=1 --ntasks=2 --ntasks-per-node=2 \
    --time=10 --output="$tmp/job_$name.out" --chdir="$tmp" "$root/launch/slurm/$template"
}

# preempt NAME JOBID: waits for the first checkpoint, then sends the batch shell SIGUSR1.
preempt() {
  local name=$1 id=$2
  wait_for 60 "job $id ($name) to start" job_started "$id" || return 1
  wait_for 90 "the first checkpoint of $name" checkpointed_or_ended "$name" "$id" || return 1
  if [[ ! -f $tmp/run_$name/checkpoints/LATEST ]]; then
    fail "$name: job $id ended $(job_field "$id" JobState) (exit $(job_field "$id" ExitCode)) before its first checkpoint"
    return 1
  fi
  scancel --signal=USR1 --batch "$id" || {
    fail "scancel --signal=USR1 --batch $id failed"
    return 1
  }
}

# A preempted job requeues itself, resumes from its checkpoint and finishes.
requeue_case() {
  local name=$1 template=$2 id
  id=$(submit "$name" "$template" 3) || {
    fail "$name: sbatch refused $template"
    return
  }
  say "$name: job $id ($template)"
  preempt "$name" "$id" || return
  local out=$tmp/job_$name.out run=$tmp/run_$name
  wait_for 60 "job $id ($name) to be requeued and running again" job_restarted "$id" || return
  pass "$name: preempted job requeued itself and runs again (Restarts=$(job_field "$id" Restarts))"
  wait_for 120 "job $id ($name) to finish" job_ended "$id" || return
  local state code
  state=$(job_field "$id" JobState)
  code=$(job_field "$id" ExitCode)
  if [[ $state == COMPLETED && $code == 0:0 && $(job_field "$id" Restarts) == 1 ]]; then
    pass "$name: job finished (COMPLETED, exit 0:0, 1 restart)"
  else
    fail "$name: job ended $state, exit $code, restarts $(job_field "$id" Restarts)"
  fi
  local stop_at
  stop_at=$(sed -n 's/.*stopped by a signal at iteration \([0-9]*\).*/\1/p' "$run/logs/rank_0.log" | head -n 1)
  if [[ -n $stop_at ]] && ((stop_at > 0 && stop_at < iters)) &&
    grep -q "resuming from .* at iteration $stop_at " "$run/logs/rank_0.log"; then
    pass "$name: stopped at iteration $stop_at, checkpointed, resumed from iteration $stop_at"
  else
    fail "$name: no stop before iteration $iters followed by a resume from that iteration in $run/logs/rank_0.log (stop: '${stop_at}')"
  fi
  if grep -q "requeue: checkpointed" "$out" && grep -q "start: restart 1 of" "$out" &&
    grep -q "done: the run finished" "$out"; then
    pass "$name: job output (--open-mode=append) holds both runs: requeue, restart 1, done"
  else
    fail "$name: $out lacks the requeue / restart 1 / done lines"
  fi
  # Every iteration exactly once: the second run continued the first instead of starting over.
  local expected actual latest
  expected=$(seq 1 "$iters" | tr '\n' ' ')
  actual=$(tail -n +2 "$run/metrics.csv" | cut -d, -f1 | tr '\n' ' ')
  latest=$(cat "$run/checkpoints/LATEST" 2>/dev/null)
  if [[ $actual == "$expected" && $latest == "ckpt_$iters.h5" &&
    $(ckpt_step "$run/checkpoints/$latest") == "$iters" ]]; then
    pass "$name: metrics.csv has iterations 1..$iters once each; final checkpoint at $iters"
  else
    fail "$name: metrics iterations '$actual', LATEST '$latest' (want 1..$iters and ckpt_$iters.h5)"
  fi
}

# With PLACETO_MAX_RESTARTS=0 a preempted job checkpoints and fails with 75, not requeued.
cap_case() {
  local name=cap id
  id=$(submit "$name" train_mpirun.sbatch 0) || {
    fail "$name: sbatch refused the template"
    return
  }
  say "$name: job $id (train_mpirun.sbatch, PLACETO_MAX_RESTARTS=0)"
  preempt "$name" "$id" || return
  wait_for 60 "job $id ($name) to end" job_ended "$id" || return
  local state code restarts
  state=$(job_field "$id" JobState)
  code=$(job_field "$id" ExitCode)
  restarts=$(job_field "$id" Restarts)
  if [[ $state == FAILED && $code == 75:0 && $restarts == 0 ]] &&
    grep -q "FAILED: checkpointed and stopped" "$tmp/job_$name.out" &&
    [[ -f $tmp/run_$name/checkpoints/LATEST ]]; then
    pass "$name: at the restart cap the job fails with exit 75 and keeps its checkpoint"
  else
    fail "$name: job ended $state, exit $code, restarts $restarts (want FAILED, 75:0, 0)"
  fi
}

requeue_case mpirun train_mpirun.sbatch
if srun --mpi=list 2>&1 | grep -qw pmix; then
  requeue_case srun train_srun.sbatch
else
  say "srun has no PMIx plugin here: train_srun.sbatch not run"
fi
cap_case
finish
