# A pool of background jobs for the experiment drivers (sourced, not run).
#   pool_add MAX COMMAND...  starts COMMAND (a shell function or program) in the background
#                            once fewer than MAX jobs of this shell are running.
#   pool_wait                waits for every job started by pool_add.
# Under `set -e` a job that fails stops the driver at the next pool_add or pool_wait.
pool_add() {
  local max=$1
  shift
  while (($(jobs -rp | wc -l) >= max)); do wait -n; done
  "$@" &
}
pool_wait() {
  local pid
  for pid in $(jobs -p); do wait "$pid"; done
}
