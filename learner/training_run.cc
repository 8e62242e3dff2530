#include "learner/training_run.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>

#include "common/checkpoint/checkpoint_compat.h"
#include "common/checkpoint/checkpoint_store.h"
#include "common/error.h"
#include "common/files.h"
#include "common/json_util.h"
#include "common/logging.h"
#include "common/progress.h"
#include "learner/checkpointing.h"
#include "learner/param_vector.h"
#include "learner/periodic_eval.h"
#include "learner/trainer.h"
#include "sim/cluster.h"
#include "sim/families/family.h"
#include "sim/graph_set.h"

namespace placeto {

std::atomic<int>& stop_signal_flag() {
  static std::atomic<int> flag{0};
  return flag;
}

namespace {

const std::vector<std::string> kResumeMayChange = {
    "iterations", "checkpoint_every", "keep_checkpoints",     "eval_every", "eval_samples",
    "comm",       "log_level",        "collective_timeout_s", "family_dir"};

class MetricsCsv {
 public:
  static constexpr char kHeader[] =
      "iteration,wall_s,episodes,mean_runtime_us,best_runtime_us,mean_ratio_to_start,"
      "baseline,entropy,loss,grad_norm,lr,episodes_per_s,allreduce_s,sim_s,policy_s,"
      "adv_mean,adv_sd,move_fraction,best_ratio_to_start,grad_cosine,value_loss,clip_fraction,"
      "kl_to_warm_start";

  explicit MetricsCsv(const std::string& path) {
    if (file_exists(path)) upgrade(path);
    const bool fresh = !file_exists(path);
    out_ = std::fopen(path.c_str(), "a");
    if (!out_) throw SystemError(path + ": cannot open for appending");
    if (fresh) std::fprintf(out_, "%s\n", kHeader);
  }
  ~MetricsCsv() {
    if (out_) std::fclose(out_);
  }
  MetricsCsv(const MetricsCsv&) = delete;
  MetricsCsv& operator=(const MetricsCsv&) = delete;
  void row(const IterationStats& s, double wall, int64_t episodes) {
    std::fprintf(out_,
                 "%lld,%.3f,%lld,%.6f,%.6f,%.6f,%.6g,%.6g,%.6g,%.6g,%.6g,%.4f,%.6f,%.6f,%.6f,"
                 "%.6g,%.6g,%.6f,%.6f,%.6g,%.6g,%.4f,%.6g\n",
                 static_cast<long long>(s.iteration), wall, static_cast<long long>(episodes),
                 s.mean_runtime_us, s.best_runtime_us, s.mean_ratio, s.baseline, s.entropy, s.loss,
                 s.grad_norm, s.lr, s.episodes_per_s, s.allreduce_s, s.sim_s, s.policy_s,
                 s.adv_mean, s.adv_sd, s.move_fraction, s.best_ratio, s.grad_cosine, s.value_loss,
                 s.clip_fraction, s.kl);
    std::fflush(out_);
  }

 private:
  // A run resumed by a newer version: its older rows get empty cells for the new columns.
  static void upgrade(const std::string& path) {
    const std::string text = read_file(path);
    const size_t eol = text.find('\n');
    const std::string header = text.substr(0, eol);
    const std::string want = kHeader;
    if (header == want || want.rfind(header + ",", 0) != 0) return;
    const std::string pad(static_cast<size_t>(std::count(want.begin(), want.end(), ',') -
                                              std::count(header.begin(), header.end(), ',')),
                          ',');
    std::string out = want + "\n";
    for (size_t pos = eol == std::string::npos ? text.size() : eol + 1; pos < text.size();) {
      size_t end = text.find('\n', pos);
      if (end == std::string::npos) end = text.size();
      if (end > pos) out += text.substr(pos, end - pos) + pad + "\n";
      pos = end + 1;
    }
    write_file_atomic(path, out);
  }

  std::FILE* out_ = nullptr;
};

// Thrown to leave the run cleanly at RunOptions::test_exit_iteration.
struct TestEarlyExit {};

bool agree_to_stop(Communicator& comm) {
  std::vector<double> mine = {static_cast<double>(stop_signal_flag().load())};
  std::vector<double> all = comm.all_gather_doubles(mine);
  for (double x : all)
    if (x > 0) return true;
  return false;
}

// FNV-1a over the bytes of the flat parameter vector.
uint64_t params_hash(const std::vector<float>& params) {
  uint64_t h = 1469598103934665603ull;
  const auto* b = reinterpret_cast<const unsigned char*>(params.data());
  for (size_t i = 0; i < params.size() * sizeof(float); ++i) {
    h ^= b[i];
    h *= 1099511628211ull;
  }
  return h;
}

// Proves that every rank holds bit-identical parameters; throws SystemError otherwise.
void verify_identical_params(Trainer& trainer, Communicator& comm) {
  const uint64_t h = params_hash(trainer.state().params);
  std::vector<double> all = comm.all_gather_doubles(
      {static_cast<double>(h >> 32), static_cast<double>(h & 0xffffffffull)});
  for (int r = 0; r < comm.size(); ++r)
    if (all[2 * r] != all[0] || all[2 * r + 1] != all[1])
      throw SystemError("parameters differ between rank 0 and rank " + std::to_string(r) +
                        " at iteration " + std::to_string(trainer.iteration()));
  spdlog::info("parameters identical on all {} ranks at iteration {} (hash {:016x})", comm.size(),
               trainer.iteration(), h);
}

// The inputs of a run, every one read and checked before the run directory is touched: a
// refused config, family or cluster leaves nothing behind.
struct RunInputs {
  TrainConfig cfg;
  std::string config_yaml;  // the resolved config, written to the run directory
  std::vector<NamedGraph> train;
  Cluster cluster;
};

RunInputs load_run_inputs(const RunOptions& options) {
  RunInputs in;
  in.cfg = load_train_config(options.config_path, options.overrides);
  if (in.cfg.family_dir.empty())
    throw InputError(options.config_path +
                     ": family_dir: required (a generated family or a "
                     "directory of graphs; set it in the file or as family_dir=DIR)");
  in.config_yaml = train_config_to_yaml(in.cfg);
  in.train = load_graph_split(in.cfg.family_dir, "train");
  in.cluster = resolve_cluster(in.cfg.cluster, in.cfg.devices);
  if (in.cluster.num_devices() != in.cfg.devices)
    throw InputError(options.config_path + ": devices: " + std::to_string(in.cfg.devices) +
                     " but the cluster " + in.cfg.cluster + " has " +
                     std::to_string(in.cluster.num_devices()));
  return in;
}

// Rank 0 takes the run directory's lock for the whole run (a second trainer on the same
// directory is refused, on every rank, before it writes anything) and creates logs/ and
// checkpoints/; then every rank starts logging.  Collective.
std::unique_ptr<FileLock> claim_run_directory(const RunOptions& options, const TrainConfig& cfg,
                                              Communicator& comm) {
  const std::string& run_dir = options.run_dir;
  std::unique_ptr<FileLock> lock;
  std::string lock_error;
  if (comm.rank() == 0) {
    try {
      make_directories(run_dir);
      lock = std::make_unique<FileLock>(run_dir + "/run.lock", "the run directory",
                                        options.lock_wait_s);
      make_directories(run_dir + "/logs");
      make_directories(run_dir + "/checkpoints");
    } catch (const Error& e) {
      lock_error = e.what();
    }
  }
  // The directories exist (or rank 0 failed) before anyone logs.
  std::vector<double> sync = comm.all_gather_doubles({lock_error.empty() ? 0.0 : 1.0});
  if (!lock_error.empty()) throw InputError(lock_error);
  if (sync[0] != 0.0)
    throw InputError(run_dir + ": rank 0 could not take the run directory (see its message)");
  LogOptions lo;
  lo.rank = comm.rank();
  lo.level = cfg.log_level;
  lo.file = run_dir + "/logs/rank_" + std::to_string(comm.rank()) + ".log";
  init_logging(lo);
  spdlog::info("rank {} of {}: pid {}", comm.rank(), comm.size(), static_cast<long>(::getpid()));
  return lock;
}

// --resume auto|PATH: restores the trainer from a checkpoint whose config matches (keys in
// kResumeMayChange may differ).  --resume none refuses a directory that holds checkpoints.
void resume_if_asked(const RunOptions& options, const RunInputs& in, const ParamLayout& layout,
                     CheckpointStore& store, Trainer* trainer, Communicator& comm) {
  if (options.resume == "none") {
    if (comm.rank() == 0 && !store.steps().empty())
      throw InputError(options.run_dir +
                       ": already holds checkpoints; pass --resume auto to continue "
                       "the run, or choose another --run-dir");
    return;
  }
  std::optional<CheckpointData> data;
  std::string path;
  if (options.resume == "auto") {
    data = store.load_latest(&path);
  } else {
    path = options.resume;
    data = read_checkpoint_file(path);
  }
  if (!data) {
    spdlog::info("no checkpoint in {}: starting a new run", options.run_dir + "/checkpoints");
    return;
  }
  // Through the parser first, so that keys added since the checkpoint was written compare
  // as their defaults.
  check_config_matches(train_config_to_yaml(parse_train_config(data->config_yaml,
                                                               path + " (/meta config_yaml)", {})),
                       in.config_yaml, kResumeMayChange, path);
  trainer->restore(trainer_state_from_checkpoint(*data, layout, in.cfg.baseline_window, path));
  if (data->world_size != comm.size())
    spdlog::warn("resuming a run of {} ranks with {} ranks: it continues, but not bit-exactly",
                 data->world_size, comm.size());
  spdlog::info("resuming from {} at iteration {} ({} episodes)", path, data->step, data->episodes);
}

// Publishes checkpoints (rank 0) through the store: ckpt_N.h5 and LATEST, atomically.
class CheckpointPublisher {
 public:
  CheckpointPublisher(const RunOptions& options, const RunInputs& in, const ParamLayout& layout,
                      CheckpointStore& store, int rank)
      : options_(options), in_(in), layout_(layout), store_(store), rank_(rank) {}

  void publish(Trainer& trainer) {
    TrainerState st = trainer.state();
    if (rank_ != 0) return;
    CheckpointData data = trainer_state_to_checkpoint(st, layout_, in_.config_yaml, in_.cfg.seed);
    stamp_checkpoint(&data);
    std::string path;
    try {
      path = store_.publish(data);
    } catch (const Error& e) {
      throw SystemError(std::string("could not write the checkpoint of iteration ") +
                        std::to_string(st.iteration) + " (" + e.what() +
                        "); the previous checkpoint and LATEST are unchanged");
    }
    spdlog::info("checkpoint {} (iteration {})", path, st.iteration);
    // Test hook (tests/mpi/trainer_mpi_test.sh): stall after checkpoint N so that a test can
    // SIGKILL the job at a known point, however fast the machine.
    if (options_.test_stall_after_checkpoint == st.iteration) {
      spdlog::warn("PLACETO_TEST_STALL_AFTER_CHECKPOINT: stalling after checkpoint {}",
                   st.iteration);
      ::sleep(600);
    }
  }

 private:
  const RunOptions& options_;
  const RunInputs& in_;
  const ParamLayout& layout_;
  CheckpointStore& store_;
  int rank_;
};

// Periodic evaluation on the family's test split (docs/TRAINING.md): eval.csv, and the best
// checkpoint (best.h5, best.json) by the greedy ratio to the best classical placer.
class EvaluationRecorder {
 public:
  EvaluationRecorder(const RunOptions& options, const RunInputs& in, const ParamLayout& layout,
                     Communicator& comm)
      : options_(options), in_(in), layout_(layout), rank_(comm.rank()) {
    const TrainConfig& cfg = in.cfg;
    if (file_exists(cfg.family_dir + "/manifest.json") &&
        !load_family_manifest(cfg.family_dir).test.empty()) {
      evaluator_ = std::make_unique<PeriodicEvaluator>(
          cfg, load_graph_split(cfg.family_dir, "test"), in.cluster, comm);
      spdlog::info("evaluating on {} test graphs {}", evaluator_->num_graphs(),
                   cfg.eval_every > 0 ? "every " + std::to_string(cfg.eval_every) + " iterations"
                                      : std::string("at the end"));
    } else {
      spdlog::info("{} has no test split: no evaluation during training", cfg.family_dir);
    }
    if (rank_ == 0 && file_exists(best_json())) {
      Json b = parse_json_text(read_file(best_json()), best_json());
      best_score_ = JsonField(b, best_json(), "").at("score").as_finite_number();
    }
  }

  bool enabled() const { return evaluator_ != nullptr; }
  int64_t last_iteration() const { return last_; }

  // Collective.
  void evaluate(Trainer& trainer) {
    last_ = trainer.iteration();
    EvalSummary ev = evaluator_->evaluate(trainer.policy(), trainer.iteration());
    if (rank_ != 0) return;
    const bool best = ev.score() < best_score_;
    const std::string eval_csv = options_.run_dir + "/eval.csv";
    std::string text =
        file_exists(eval_csv) ? read_file(eval_csv) : PeriodicEvaluator::csv_header();
    text += PeriodicEvaluator::csv_row(ev, best);
    write_file_atomic(eval_csv, text);
    spdlog::info(
        "eval at iteration {}: greedy x{:.3f} of best classical (x{:.3f} of single, "
        "x{:.3f} of heft), best of {} x{:.3f}, {} infeasible, {:.1f} s{}",
        ev.iteration, ev.greedy_vs_best_classical, ev.greedy_vs_single, ev.greedy_vs_heft,
        in_.cfg.eval_samples, ev.sampled_vs_best_classical, ev.greedy_failures, ev.seconds,
        best ? " (new best)" : "");
    if (!best) return;
    best_score_ = ev.score();
    CheckpointData data =
        trainer_state_to_checkpoint(trainer.state(), layout_, in_.config_yaml, in_.cfg.seed);
    stamp_checkpoint(&data);
    write_checkpoint_file(options_.run_dir + "/checkpoints/best.h5", data);
    Json b;
    b["iteration"] = ev.iteration;
    b["score"] = ev.score();
    b["greedy_vs_best_classical"] = ev.greedy_vs_best_classical;
    b["greedy_vs_single"] = ev.greedy_vs_single;
    b["checkpoint"] = "best.h5";
    write_file_atomic(best_json(), b.dump(2) + "\n");
  }

 private:
  std::string best_json() const { return options_.run_dir + "/checkpoints/best.json"; }

  const RunOptions& options_;
  const RunInputs& in_;
  const ParamLayout& layout_;
  int rank_;
  std::unique_ptr<PeriodicEvaluator> evaluator_;
  double best_score_ = std::numeric_limits<double>::infinity();
  int64_t last_ = -1;
};

}  // namespace

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

int run_training(const RunOptions& options, Communicator& comm) {
  const int rank = comm.rank();
  const RunInputs in = load_run_inputs(options);
  const TrainConfig& cfg = in.cfg;
  const std::unique_ptr<FileLock> lock = claim_run_directory(options, cfg, comm);

  Trainer trainer(cfg, in.train, in.cluster, comm);
  const ParamLayout layout = param_layout(trainer.policy());
  CheckpointStore store(options.run_dir + "/checkpoints", cfg.keep_checkpoints);
  resume_if_asked(options, in, layout, store, &trainer, comm);
  if (rank == 0) write_file_atomic(options.run_dir + "/config.yaml", in.config_yaml);
  spdlog::info("training on {} graphs of {} with {} devices, {} ranks, {} parameters",
               in.train.size(), cfg.family_dir, cfg.devices, comm.size(), layout.total());

  std::unique_ptr<MetricsCsv> metrics;
  std::unique_ptr<ProgressLine> progress;
  if (rank == 0) {
    metrics = std::make_unique<MetricsCsv>(options.run_dir + "/metrics.csv");
    progress = std::make_unique<ProgressLine>("train", cfg.iterations, "it");
  }
  EvaluationRecorder evaluation(options, in, layout, comm);
  CheckpointPublisher checkpoints(options, in, layout, store, rank);
  bool stopped = false;
  int64_t last_saved = trainer.iteration();
  auto after_iteration = [&](const IterationStats& s) {
    if (rank == 0) {
      TrainerState st = trainer.state();
      metrics->row(s, st.wall_seconds, st.episodes);
      char extra[160];
      std::snprintf(extra, sizeof extra, "mean %.0f us (x%.3f of start)  entropy %.3f",
                    s.mean_runtime_us, s.mean_ratio, s.entropy);
      progress->update(s.iteration, extra);
    }
    if (s.iteration % cfg.checkpoint_every == 0) {
      verify_identical_params(trainer, comm);
      checkpoints.publish(trainer);
      last_saved = s.iteration;
    }
    if (evaluation.enabled() && cfg.eval_every > 0 && s.iteration % cfg.eval_every == 0)
      evaluation.evaluate(trainer);
    if (rank == options.test_exit_rank && s.iteration == options.test_exit_iteration)
      throw TestEarlyExit{};
  };
  try {
    trainer.run(
        [&] {
          stopped = agree_to_stop(comm);
          return stopped;
        },
        after_iteration);
  } catch (const TestEarlyExit&) {
    // Test hook (tests/mpi/faults_test.sh): this rank leaves cleanly (its communicator is
    // destroyed, MPI_Finalize runs, exit code 0), as a rank whose program ends early would;
    // the others must notice within collective_timeout_s and name it.
    spdlog::warn("PLACETO_TEST_EXIT_AT_ITERATION: rank {} leaves after iteration {}, exit code 0",
                 rank, trainer.iteration());
    return kExitDone;
  }
  if (trainer.iteration() != last_saved) checkpoints.publish(trainer);
  if (evaluation.enabled() && !stopped && trainer.iteration() != evaluation.last_iteration())
    evaluation.evaluate(trainer);
  if (progress) progress->finish();
  verify_identical_params(trainer, comm);
  if (stopped) {
    spdlog::warn(
        "stopped by a signal at iteration {}: checkpointed; exit code {} asks to be "
        "run again with --resume auto",
        trainer.iteration(), kExitRequeue);
    return kExitRequeue;
  }
  spdlog::info("training done: {} iterations", trainer.iteration());
  return kExitDone;
}

}  // namespace placeto
