#include "training/run.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "common/error.h"
#include "common/logging.h"

namespace placeto {

void read_run_environment(RunOptions* options) {
  if (const char* env = std::getenv("PLACETO_RUN_LOCK_WAIT_S")) {
    char* end = nullptr;
    const double s = std::strtod(env, &end);
    if (end == env || *end != '\0' || !(s >= 0 && s <= 3600))
      throw InputError(std::string("PLACETO_RUN_LOCK_WAIT_S: expected seconds in [0, 3600], got ") +
                       quoted_name(env));
    options->lock_wait_s = s;
  }
  if (const char* hook = std::getenv("PLACETO_TEST_EXIT_AT_ITERATION")) {
    long long r = -1, k = -1;
    if (std::sscanf(hook, "%lld:%lld", &r, &k) != 2)
      throw InputError(std::string("PLACETO_TEST_EXIT_AT_ITERATION: expected RANK:ITERATION, "
                                   "got ") +
                       quoted_name(hook));
    options->test_exit_rank = static_cast<int>(r);
    options->test_exit_iteration = k;
  }
  if (const char* stall = std::getenv("PLACETO_TEST_STALL_AFTER_CHECKPOINT"))
    options->test_stall_after_checkpoint = std::atoll(stall);
}

std::atomic<int>& stop_signal_flag() {
  static std::atomic<int> flag{0};
  return flag;
}

bool agree_to_stop(Communicator& comm) {
  return comm.all_reduce_max(static_cast<int64_t>(stop_signal_flag().load())) > 0;
}

RunDirectory::RunDirectory(const RunOptions& options, const std::string& log_level,
                           Communicator& comm)
    : path_(options.run_dir) {
  std::string lock_error;
  if (comm.rank() == 0) {
    try {
      make_directories(path_);
      lock_ =
          std::make_unique<FileLock>(path_ + "/run.lock", "the run directory", options.lock_wait_s);
      make_directories(path_ + "/logs");
      make_directories(checkpoints());
    } catch (const Error& e) {
      lock_error = e.what();
    }
  }
  // The directories exist (or rank 0 failed) before anyone logs.
  const std::vector<double> sync = comm.all_gather_doubles({lock_error.empty() ? 0.0 : 1.0});
  if (!lock_error.empty()) throw InputError(lock_error);
  if (sync[0] != 0.0)
    throw InputError(path_ + ": rank 0 could not take the run directory (see its message)");
  LogOptions lo;
  lo.rank = comm.rank();
  lo.level = log_level;
  lo.file = path_ + "/logs/rank_" + std::to_string(comm.rank()) + ".log";
  init_logging(lo);
  spdlog::info("rank {} of {}: pid {}", comm.rank(), comm.size(), static_cast<long>(::getpid()));
}

std::optional<Resumed> load_resume_checkpoint(const RunOptions& options, CheckpointStore& store,
                                              Communicator& comm) {
  if (options.resume == "none") {
    if (comm.rank() == 0 && !store.steps().empty())
      throw InputError(options.run_dir +
                       ": already holds checkpoints; pass --resume auto to continue "
                       "the run, or choose another --run-dir");
    return std::nullopt;
  }
  Resumed r;
  if (options.resume == "auto") {
    std::optional<CheckpointData> data = store.load_latest(&r.path);
    if (!data) {
      spdlog::info("no checkpoint in {}: starting a new run", store.dir());
      return std::nullopt;
    }
    r.data = std::move(*data);
  } else {
    r.path = options.resume;
    r.data = read_checkpoint_file(r.path);
  }
  return r;
}

uint64_t params_hash(const std::vector<float>& params) {
  uint64_t h = 1469598103934665603ull;
  const auto* b = reinterpret_cast<const unsigned char*>(params.data());
  for (size_t i = 0; i < params.size() * sizeof(float); ++i) {
    h ^= b[i];
    h *= 1099511628211ull;
  }
  return h;
}

void verify_identical_params(const std::vector<float>& params, int64_t iteration,
                             Communicator& comm) {
  const uint64_t h = params_hash(params);
  const std::vector<double> all = comm.all_gather_doubles(
      {static_cast<double>(h >> 32), static_cast<double>(h & 0xffffffffull)});
  for (int r = 0; r < comm.size(); ++r)
    if (all[2 * r] != all[0] || all[2 * r + 1] != all[1])
      throw SystemError("parameters differ between rank 0 and rank " + std::to_string(r) +
                        " at iteration " + std::to_string(iteration));
  spdlog::info("parameters identical on all {} ranks at iteration {} (hash {:016x})", comm.size(),
               iteration, h);
}

std::string publish_checkpoint(CheckpointStore& store, CheckpointData data, int64_t iteration,
                               const RunOptions& options) {
  stamp_checkpoint(&data);
  std::string path;
  try {
    path = store.publish(data);
  } catch (const Error& e) {
    throw SystemError(std::string("could not write the checkpoint of iteration ") +
                      std::to_string(iteration) + " (" + e.what() +
                      "); the previous checkpoint and LATEST are unchanged");
  }
  spdlog::info("checkpoint {} (iteration {})", path, iteration);
  // Test hook (tests/mpi/trainer_mpi_test.sh): stall after checkpoint N so that a test can
  // SIGKILL the job at a known point, however fast the machine.
  if (options.test_stall_after_checkpoint == iteration) {
    spdlog::warn("PLACETO_TEST_STALL_AFTER_CHECKPOINT: stalling after checkpoint {}", iteration);
    ::sleep(600);
  }
  return path;
}

}  // namespace placeto
