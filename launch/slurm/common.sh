# shellcheck shell=bash disable=SC2034  # sourced; sets variables for the templates
# Shared part of the SLURM batch templates (train_srun.sbatch, train_mpirun.sbatch); sourced,
# not run.  It turns one batch job into a chain of allocations that together finish a run:
#
#   1. the job starts the trainer with `--resume auto` (a new run, or the run's LATEST checkpoint);
#   2. SIGUSR1 (sent by SLURM `--signal=B:USR1@N` seconds before the time limit, or by
#      `scancel --signal=USR1 --batch`) and SIGTERM reach this shell, which forwards SIGUSR1 to
#      the launched step and keeps waiting for it: the trainer checkpoints at the next iteration
#      boundary (all ranks agree on which) and exits 75, "requeue me";
#   3. on 75 the script requeues its own job with `scontrol requeue` (SLURM's --requeue alone
#      does not requeue on a time limit or an exit code), at most PLACETO_MAX_RESTARTS times.
#
# Settings, from the environment (`export` before sbatch, or sbatch --export=ALL,NAME=value):
#   PLACETO_ROOT          checkout with build/bin and experiments/ (default: the directory
#                         sbatch was called from, $SLURM_SUBMIT_DIR)
#   PLACETO_BIN           directory with placeto_actor (default $PLACETO_ROOT/build/bin)
#   PLACETO_CONFIG        training config (default experiments/configs/quickstart.yaml)
#   PLACETO_RUN_DIR       run directory; must stay the same across requeues, which it does by
#                         default (runs/<job name>-<job id>: requeue keeps the job id)
#   PLACETO_OVERRIDES     space-separated key=value config overrides, e.g.
#                         "family_dir=data/ptb iterations=2000"
#   PLACETO_MAX_RESTARTS  requeues allowed before the job fails instead (default 20)
#
# Exit codes of the job: 0 the run finished; 75 stopped and checkpointed but not requeued
# (restart cap reached, or scontrol requeue refused): resubmit with the same PLACETO_RUN_DIR;
# anything else is the trainer's own failure (2 bad input, 3 internal error, >128 killed).

readonly PLACETO_EXIT_REQUEUE=75

placeto_log() { echo "[placeto-slurm $(date -u +%FT%TZ) job ${SLURM_JOB_ID:-?}] $*"; }

# Resolves and checks the settings above; prints where this allocation stands.
placeto_slurm_init() {
  PLACETO_ROOT=${PLACETO_ROOT:-${SLURM_SUBMIT_DIR:-$PWD}}
  PLACETO_BIN=${PLACETO_BIN:-$PLACETO_ROOT/build/bin}
  PLACETO_CONFIG=${PLACETO_CONFIG:-$PLACETO_ROOT/experiments/configs/quickstart.yaml}
  PLACETO_RUN_DIR=${PLACETO_RUN_DIR:-$PLACETO_ROOT/runs/${SLURM_JOB_NAME:-placeto}-${SLURM_JOB_ID:-0}}
  PLACETO_OVERRIDES=${PLACETO_OVERRIDES:-}
  PLACETO_MAX_RESTARTS=${PLACETO_MAX_RESTARTS:-20}
  PLACETO_RESTART_COUNT=${SLURM_RESTART_COUNT:-0}
  if [[ ! -x $PLACETO_BIN/placeto_actor ]]; then
    placeto_log "error: $PLACETO_BIN/placeto_actor not found; build first or set PLACETO_BIN" \
      "(PLACETO_ROOT=$PLACETO_ROOT)"
    exit 2
  fi
  if [[ ! -f $PLACETO_CONFIG ]]; then
    placeto_log "error: PLACETO_CONFIG=$PLACETO_CONFIG: no such file"
    exit 2
  fi
  if ! [[ $PLACETO_MAX_RESTARTS =~ ^[0-9]+$ ]]; then
    placeto_log "error: PLACETO_MAX_RESTARTS=$PLACETO_MAX_RESTARTS: expected a whole number"
    exit 2
  fi
  # Open MPI refuses to run as root unless told (containers, test clusters).
  if [[ $(id -u) == 0 ]]; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  fi
  # One BLAS/torch thread per rank unless the job asked for more CPUs per task.
  export OMP_NUM_THREADS=${OMP_NUM_THREADS:-${SLURM_CPUS_PER_TASK:-1}}
  export OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-$OMP_NUM_THREADS}
  export MKL_NUM_THREADS=${MKL_NUM_THREADS:-$OMP_NUM_THREADS}
  read -r -a PLACETO_OVERRIDE_ARGS <<<"$PLACETO_OVERRIDES"
  placeto_log "start: restart ${PLACETO_RESTART_COUNT} of at most ${PLACETO_MAX_RESTARTS}," \
    "${SLURM_NTASKS:-?} tasks on ${SLURM_JOB_NODELIST:-?}, run dir $PLACETO_RUN_DIR"
}

# The trainer's command line, shared by both launchers.
placeto_actor_args() {
  PLACETO_ACTOR_ARGS=("$PLACETO_BIN/placeto_actor" --config "$PLACETO_CONFIG"
    --run-dir "$PLACETO_RUN_DIR" --resume auto "${PLACETO_OVERRIDE_ARGS[@]}")
}

_placeto_step_pid=0
_placeto_stop_requests=0

# A trap cannot interrupt a foreground command, so the step runs in the background and this
# shell waits for it; each SIGUSR1/SIGTERM is passed on as SIGUSR1, the trainer's "checkpoint
# and stop" request (SIGTERM would make mpirun kill its ranks without a checkpoint).  A second
# signal reaches the trainer as a second SIGUSR1, which makes it leave at once (exit 75).
_placeto_forward() {
  _placeto_stop_requests=$((_placeto_stop_requests + 1))
  placeto_log "got SIG$1 (request ${_placeto_stop_requests}); forwarding SIGUSR1 to the step"
  if ((_placeto_step_pid > 0)); then
    kill -USR1 "$_placeto_step_pid" 2>/dev/null || true
  fi
}

# Runs "$@" (the launcher and the trainer) as the job's step, forwarding stop signals, and
# sets PLACETO_STEP_RC to its exit status.
placeto_slurm_run() {
  trap '_placeto_forward USR1' USR1
  trap '_placeto_forward TERM' TERM
  placeto_log "launch: $*"
  "$@" &
  _placeto_step_pid=$!
  # A signal that arrived before the step existed still asks it to stop.
  if ((_placeto_stop_requests > 0)); then kill -USR1 "$_placeto_step_pid" 2>/dev/null || true; fi
  local rc=0
  while :; do
    wait "$_placeto_step_pid"
    rc=$?
    # wait returns >128 when a trapped signal interrupts it; the step may still be running.
    kill -0 "$_placeto_step_pid" 2>/dev/null || break
  done
  # bash remembers a reaped child's status: this gives the step's own code even if the last
  # wait above was the interrupted one.
  wait "$_placeto_step_pid" 2>/dev/null
  local again=$?
  ((again != 127)) && rc=$again
  _placeto_step_pid=0
  PLACETO_STEP_RC=$rc
  placeto_log "step exited with code $rc"
}

# Ends the job according to the trainer's exit code.
placeto_slurm_finish() {
  local rc=$1
  case $rc in
    0)
      placeto_log "done: the run finished; results in $PLACETO_RUN_DIR"
      exit 0
      ;;
    "$PLACETO_EXIT_REQUEUE")
      if ((PLACETO_RESTART_COUNT >= PLACETO_MAX_RESTARTS)); then
        placeto_log "FAILED: checkpointed and stopped, but this job was already requeued" \
          "$PLACETO_RESTART_COUNT times (PLACETO_MAX_RESTARTS=$PLACETO_MAX_RESTARTS)." \
          "Resubmit with PLACETO_RUN_DIR=$PLACETO_RUN_DIR to continue the run."
        exit "$PLACETO_EXIT_REQUEUE"
      fi
      placeto_log "requeue: checkpointed at a signal; requeueing job $SLURM_JOB_ID" \
        "(restart $((PLACETO_RESTART_COUNT + 1)) of at most $PLACETO_MAX_RESTARTS)"
      if scontrol requeue "$SLURM_JOB_ID"; then
        # slurmctld now ends this allocation and queues the job again; nothing left to do.
        exit 0
      fi
      placeto_log "FAILED: scontrol requeue $SLURM_JOB_ID was refused (is requeue disabled on" \
        "this cluster?). Resubmit with PLACETO_RUN_DIR=$PLACETO_RUN_DIR to continue the run."
      exit "$PLACETO_EXIT_REQUEUE"
      ;;
    *)
      placeto_log "FAILED: the trainer exited with code $rc (2 bad input, 3 internal error," \
        ">128 killed by a signal); see the messages above and $PLACETO_RUN_DIR/logs/"
      exit "$rc"
      ;;
  esac
}
