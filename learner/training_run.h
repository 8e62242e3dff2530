// A training run in a run directory: the resolved config.yaml, metrics.csv, one log per rank,
// checkpoints (checkpoints/ckpt_N.h5 + LATEST), resume, a progress line with rate and ETA, and
// a final evaluation on the test split.  Shared by `placeto train` (one process) and
// `placeto_actor` (MPI); only the Communicator differs (one rank, or MPI/NCCL).
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "common/comm/comm.h"

namespace placeto {

struct RunOptions {
  std::string config_path;
  std::string run_dir;
  std::string resume = "none";  // none | auto | <checkpoint path>
  std::vector<std::string> overrides;
  // How long rank 0 waits for the run directory's lock: 15 s, because the holder of a run
  // that was just killed or preempted may still be exiting.
  double lock_wait_s = 15;
  // Test hooks (tests/mpi): rank test_exit_rank leaves the run cleanly after iteration
  // test_exit_iteration; rank 0 stalls for 600 s after the checkpoint of iteration
  // test_stall_after_checkpoint.  -1 = off.
  int test_exit_rank = -1;
  int64_t test_exit_iteration = -1;
  int64_t test_stall_after_checkpoint = -1;
};

// Fills the fields above from PLACETO_RUN_LOCK_WAIT_S (seconds in [0, 3600]),
// PLACETO_TEST_EXIT_AT_ITERATION (RANK:ITERATION) and PLACETO_TEST_STALL_AFTER_CHECKPOINT;
// InputError on a malformed value.  The executables call it; run_training reads no
// environment variable.
void read_run_environment(RunOptions* options);

// Exit codes of a training run (documented in docs/TRAINING.md).
constexpr int kExitDone = 0;
constexpr int kExitRequeue = 75;  // stopped by a signal after checkpointing: run again

// Set by signal handlers (SIGTERM/SIGUSR1); all ranks agree on it at iteration boundaries.
std::atomic<int>& stop_signal_flag();

// Runs (or resumes) training.  Throws placeto::Error on bad input.
int run_training(const RunOptions& options, Communicator& comm);

}  // namespace placeto
