// A training run in a run directory: the resolved config.yaml, metrics.csv, one log per rank,
// checkpoints (checkpoints/ckpt_N.h5 + LATEST), resume, a progress line with rate and ETA, and
// a final evaluation on the test split.  Shared by `placeto train` (one process) and
// `placeto_actor` (MPI); only the Collective differs.
#pragma once

#include <atomic>
#include <string>
#include <vector>

#include "learner/collective.h"

namespace placeto {

struct RunOptions {
  std::string config_path;
  std::string run_dir;
  std::string resume = "none";  // none | auto | <checkpoint path>
  std::vector<std::string> overrides;
};

// Exit codes of a training run (documented in docs/TRAINING.md).
constexpr int kExitDone = 0;
constexpr int kExitRequeue = 75;  // stopped by a signal after checkpointing: run again

// Set by signal handlers (SIGTERM/SIGUSR1); all ranks agree on it at iteration boundaries.
std::atomic<int>& stop_signal_flag();

// Runs (or resumes) training.  Throws placeto::Error on bad input.
int run_training(const RunOptions& options, Collective& coll);

}  // namespace placeto
