// The run harness that every trainer shares (the Placeto policy's in learner/, the move
// scorer's in improve/): what a run is given (RunOptions), how its directory is claimed, how
// it resumes, how it agrees to stop, how it proves that every rank holds the same parameters
// and how it publishes checkpoints.  No torch.
//
// A trainer's run, on every rank of a Communicator:
//   RunDirectory dir(options, log_level, comm);             // lock, logs/, checkpoints/, logging
//   CheckpointStore store(dir.checkpoints(), keep);
//   std::optional<Resumed> r = load_resume_checkpoint(options, store, comm);
//   ... check r->data.config_yaml through the trainer's parser (check_config_matches) ...
//   write the resolved config (rank 0), then per iteration:
//     MetricsCsv row (rank 0); verify_identical_params(); publish_checkpoint() (rank 0);
//     if (agree_to_stop(comm)) return kExitRequeue;
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/checkpoint/checkpoint_store.h"
#include "common/comm/comm.h"
#include "common/files.h"

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
  // test_exit_iteration (with test_exit_rank = 0 in the scorer's trainer, every rank stops
  // as after a preemption); rank 0 stalls for 600 s after the checkpoint of iteration
  // test_stall_after_checkpoint.  -1 = off.
  int test_exit_rank = -1;
  int64_t test_exit_iteration = -1;
  int64_t test_stall_after_checkpoint = -1;
};

// Fills the fields above from PLACETO_RUN_LOCK_WAIT_S (seconds in [0, 3600]),
// PLACETO_TEST_EXIT_AT_ITERATION (RANK:ITERATION) and PLACETO_TEST_STALL_AFTER_CHECKPOINT;
// InputError on a malformed value.  The executables call it; the trainers read no
// environment variable.
void read_run_environment(RunOptions* options);

// Exit codes of a training run (documented in docs/TRAINING.md).
constexpr int kExitDone = 0;
constexpr int kExitRequeue = 75;  // stopped by a signal after checkpointing: run again

// Set by signal handlers (SIGTERM/SIGUSR1); all ranks agree on it at iteration boundaries.
std::atomic<int>& stop_signal_flag();

// True on every rank when any rank has seen a stop signal.  Collective.
bool agree_to_stop(Communicator& comm);

// The run directory, held for the whole run: rank 0 takes its lock (a second trainer on the
// same directory is refused, on every rank, before it writes anything) and creates logs/ and
// checkpoints/; then every rank logs to logs/rank_<r>.log at `log_level`.  Collective.
class RunDirectory {
 public:
  RunDirectory(const RunOptions& options, const std::string& log_level, Communicator& comm);
  const std::string& path() const { return path_; }
  std::string checkpoints() const { return path_ + "/checkpoints"; }

 private:
  std::string path_;
  std::unique_ptr<FileLock> lock_;  // rank 0 only
};

// The checkpoint a run resumes from, and the file it came from.
struct Resumed {
  CheckpointData data;
  std::string path;
};

// --resume none: nothing, and InputError when the directory already holds checkpoints (rank
// 0 checks).  auto: the latest checkpoint of `store`, or nothing when there is none yet.
// PATH: that file.  The caller checks the config (check_config_matches, after reading the old
// text through its own parser so that keys added since compare as their defaults).
std::optional<Resumed> load_resume_checkpoint(const RunOptions& options, CheckpointStore& store,
                                              Communicator& comm);

// FNV-1a over the bytes of a flat parameter vector.
uint64_t params_hash(const std::vector<float>& params);

// Proves that every rank holds bit-identical parameters; SystemError naming the first rank
// that differs otherwise.  Collective.
void verify_identical_params(const std::vector<float>& params, int64_t iteration,
                             Communicator& comm);

// Publishes `data` (stamped here) as checkpoint `iteration` of `store` (ckpt_N.h5, then
// LATEST, atomically; rank 0 only).  A failure is a SystemError that says the previous
// checkpoint stands.  Honours RunOptions::test_stall_after_checkpoint.
std::string publish_checkpoint(CheckpointStore& store, CheckpointData data, int64_t iteration,
                               const RunOptions& options);

}  // namespace placeto
