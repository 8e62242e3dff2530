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
#include "learner/graph_set.h"
#include "learner/param_vector.h"
#include "learner/periodic_eval.h"
#include "learner/trainer.h"
#include "sim/cluster.h"
#include "sim/families/family.h"

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
      "adv_mean,adv_sd,move_fraction,best_ratio_to_start,grad_cosine";

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
                 "%.6g,%.6g,%.6f,%.6f,%.6g\n",
                 static_cast<long long>(s.iteration), wall, static_cast<long long>(episodes),
                 s.mean_runtime_us, s.best_runtime_us, s.mean_ratio, s.baseline, s.entropy, s.loss,
                 s.grad_norm, s.lr, s.episodes_per_s, s.allreduce_s, s.sim_s, s.policy_s,
                 s.adv_mean, s.adv_sd, s.move_fraction, s.best_ratio, s.grad_cosine);
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

// Test hook (tests/mpi/faults_test.sh): PLACETO_TEST_EXIT_AT_ITERATION=R:K makes rank R
// leave the run cleanly after iteration K (its communicator is destroyed, MPI_Finalize runs,
// exit code 0), as a rank whose program ends early would; the other ranks must notice within
// collective_timeout_s and name it.
struct TestEarlyExit {};

bool test_exit_now(int rank, int64_t iteration) {
  const char* hook = std::getenv("PLACETO_TEST_EXIT_AT_ITERATION");
  if (hook == nullptr) return false;
  long long r = -1, k = -1;
  return std::sscanf(hook, "%lld:%lld", &r, &k) == 2 && r == rank && k == iteration;
}

bool agree_to_stop(Collective& coll) {
  std::vector<double> mine = {static_cast<double>(stop_signal_flag().load())};
  std::vector<double> all = coll.all_gather(mine);
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

// How long rank 0 waits for the run directory's lock: 15 s, because the holder of a run that
// was just killed or preempted may still be exiting.  PLACETO_RUN_LOCK_WAIT_S overrides it
// (tests/cli/hostile_inputs_test.sh, whose holder stays alive).
double run_lock_wait_s() {
  const char* env = std::getenv("PLACETO_RUN_LOCK_WAIT_S");
  if (env == nullptr) return 15.0;
  char* end = nullptr;
  const double s = std::strtod(env, &end);
  if (end == env || *end != '\0' || !(s >= 0 && s <= 3600))
    throw InputError(std::string("PLACETO_RUN_LOCK_WAIT_S: expected seconds in [0, 3600], got ") +
                     quoted_name(env));
  return s;
}

// Proves that every rank holds bit-identical parameters; throws SystemError otherwise.
void verify_identical_params(Trainer& trainer, Collective& coll) {
  const uint64_t h = params_hash(trainer.state().params);
  std::vector<double> all =
      coll.all_gather({static_cast<double>(h >> 32), static_cast<double>(h & 0xffffffffull)});
  for (int r = 0; r < coll.size(); ++r)
    if (all[2 * r] != all[0] || all[2 * r + 1] != all[1])
      throw SystemError("parameters differ between rank 0 and rank " + std::to_string(r) +
                        " at iteration " + std::to_string(trainer.iteration()));
  spdlog::info("parameters identical on all {} ranks at iteration {} (hash {:016x})", coll.size(),
               trainer.iteration(), h);
}

}  // namespace

int run_training(const RunOptions& options, Collective& coll) {
  const int rank = coll.rank();
  TrainConfig cfg = load_train_config(options.config_path, options.overrides);
  if (cfg.family_dir.empty())
    throw InputError(options.config_path +
                     ": family_dir: required (a generated family or a "
                     "directory of graphs; set it in the file or as family_dir=DIR)");
  const std::string run_dir = options.run_dir;
  const std::string ckpt_dir = run_dir + "/checkpoints";
  // Every input is read and checked before the run directory is touched: a refused config,
  // family or cluster leaves nothing behind.
  const std::string config_yaml = train_config_to_yaml(cfg);
  std::vector<NamedGraph> train = load_graph_split(cfg.family_dir, "train");
  Cluster cluster = cfg.cluster.empty() ? default_cluster(cfg.devices) : load_cluster(cfg.cluster);
  if (cluster.num_devices() != cfg.devices)
    throw InputError(options.config_path + ": devices: " + std::to_string(cfg.devices) +
                     " but the cluster " + cfg.cluster + " has " +
                     std::to_string(cluster.num_devices()));
  // Rank 0 holds the run directory's lock for the whole run: a second trainer started on the
  // same directory is refused, on every rank, before it writes anything.
  std::unique_ptr<FileLock> lock;
  std::string lock_error;
  if (rank == 0) {
    try {
      const double wait_s = run_lock_wait_s();
      make_directories(run_dir);
      lock = std::make_unique<FileLock>(run_dir + "/run.lock", "the run directory", wait_s);
      make_directories(run_dir + "/logs");
      make_directories(ckpt_dir);
    } catch (const Error& e) {
      lock_error = e.what();
    }
  }
  // The directories exist (or rank 0 failed) before anyone logs.
  std::vector<double> sync = coll.all_gather({lock_error.empty() ? 0.0 : 1.0});
  if (!lock_error.empty()) throw InputError(lock_error);
  if (sync[0] != 0.0)
    throw InputError(run_dir + ": rank 0 could not take the run directory (see its message)");
  LogOptions lo;
  lo.rank = rank;
  lo.level = cfg.log_level;
  lo.file = run_dir + "/logs/rank_" + std::to_string(rank) + ".log";
  init_logging(lo);
  spdlog::info("rank {} of {}: pid {}", rank, coll.size(), static_cast<long>(::getpid()));

  Trainer trainer(cfg, train, cluster, coll);
  ParamLayout layout = param_layout(trainer.policy());

  // Resume.
  CheckpointStore store(ckpt_dir, cfg.keep_checkpoints);
  if (options.resume != "none") {
    std::optional<CheckpointData> data;
    std::string path;
    if (options.resume == "auto") {
      data = store.load_latest(&path);
    } else {
      path = options.resume;
      data = read_checkpoint_file(path);
    }
    if (data) {
      // Through the parser first, so that keys added since the checkpoint was written
      // compare as their defaults.
      check_config_matches(train_config_to_yaml(parse_train_config(
                               data->config_yaml, path + " (/meta config_yaml)", {})),
                           config_yaml, kResumeMayChange, path);
      trainer.restore(trainer_state_from_checkpoint(*data, layout, cfg.baseline_window, path));
      if (data->world_size != coll.size())
        spdlog::warn("resuming a run of {} ranks with {} ranks: it continues, but not bit-exactly",
                     data->world_size, coll.size());
      spdlog::info("resuming from {} at iteration {} ({} episodes)", path, data->step,
                   data->episodes);
    } else {
      spdlog::info("no checkpoint in {}: starting a new run", ckpt_dir);
    }
  } else if (rank == 0 && !store.steps().empty()) {
    throw InputError(run_dir +
                     ": already holds checkpoints; pass --resume auto to continue "
                     "the run, or choose another --run-dir");
  }
  if (rank == 0) write_file_atomic(run_dir + "/config.yaml", config_yaml);
  spdlog::info("training on {} graphs of {} with {} devices, {} ranks, {} parameters", train.size(),
               cfg.family_dir, cfg.devices, coll.size(), layout.total());

  std::unique_ptr<MetricsCsv> metrics;
  std::unique_ptr<ProgressLine> progress;
  if (rank == 0) {
    metrics = std::make_unique<MetricsCsv>(run_dir + "/metrics.csv");
    progress = std::make_unique<ProgressLine>("train", cfg.iterations, "it");
  }
  // Periodic evaluation on the family's test split (docs/TRAINING.md): eval.csv and the best
  // checkpoint by greedy ratio to the best classical placer.
  std::unique_ptr<PeriodicEvaluator> evaluator;
  if (file_exists(cfg.family_dir + "/manifest.json") &&
      !load_family_manifest(cfg.family_dir).test.empty()) {
    evaluator = std::make_unique<PeriodicEvaluator>(cfg, load_graph_split(cfg.family_dir, "test"),
                                                    cluster, coll);
    spdlog::info("evaluating on {} test graphs {}", evaluator->num_graphs(),
                 cfg.eval_every > 0 ? "every " + std::to_string(cfg.eval_every) + " iterations"
                                    : std::string("at the end"));
  } else {
    spdlog::info("{} has no test split: no evaluation during training", cfg.family_dir);
  }
  const std::string best_json = ckpt_dir + "/best.json";
  double best_score = std::numeric_limits<double>::infinity();
  if (rank == 0 && file_exists(best_json)) {
    Json b = parse_json_text(read_file(best_json), best_json);
    best_score = JsonField(b, best_json, "").at("score").as_finite_number();
  }
  auto evaluate = [&]() {
    EvalSummary ev = evaluator->evaluate(trainer.policy(), trainer.iteration());
    if (rank != 0) return;
    const bool best = ev.score() < best_score;
    const std::string eval_csv = run_dir + "/eval.csv";
    std::string text =
        file_exists(eval_csv) ? read_file(eval_csv) : PeriodicEvaluator::csv_header();
    text += PeriodicEvaluator::csv_row(ev, best);
    write_file_atomic(eval_csv, text);
    spdlog::info(
        "eval at iteration {}: greedy x{:.3f} of best classical (x{:.3f} of single, "
        "x{:.3f} of heft), best of {} x{:.3f}, {} infeasible, {:.1f} s{}",
        ev.iteration, ev.greedy_vs_best_classical, ev.greedy_vs_single, ev.greedy_vs_heft,
        cfg.eval_samples, ev.sampled_vs_best_classical, ev.greedy_failures, ev.seconds,
        best ? " (new best)" : "");
    if (best) {
      best_score = ev.score();
      CheckpointData data =
          trainer_state_to_checkpoint(trainer.state(), layout, config_yaml, cfg.seed);
      stamp_checkpoint(&data);
      write_checkpoint_file(ckpt_dir + "/best.h5", data);
      Json b;
      b["iteration"] = ev.iteration;
      b["score"] = ev.score();
      b["greedy_vs_best_classical"] = ev.greedy_vs_best_classical;
      b["greedy_vs_single"] = ev.greedy_vs_single;
      b["checkpoint"] = "best.h5";
      write_file_atomic(best_json, b.dump(2) + "\n");
    }
  };
  int64_t last_eval = -1;
  auto publish = [&]() {
    TrainerState st = trainer.state();
    if (rank == 0) {
      CheckpointData data = trainer_state_to_checkpoint(st, layout, config_yaml, cfg.seed);
      stamp_checkpoint(&data);
      std::string path;
      try {
        path = store.publish(data);
      } catch (const Error& e) {
        throw SystemError(std::string("could not write the checkpoint of iteration ") +
                          std::to_string(st.iteration) + " (" + e.what() +
                          "); the previous checkpoint and LATEST are unchanged");
      }
      spdlog::info("checkpoint {} (iteration {})", path, st.iteration);
      // Test hook (tests/mpi/trainer_mpi_test.sh): stall after checkpoint N so that a test can
      // SIGKILL the job at a known point, however fast the machine.
      if (const char* stall = std::getenv("PLACETO_TEST_STALL_AFTER_CHECKPOINT"))
        if (std::atoll(stall) == st.iteration) {
          spdlog::warn("PLACETO_TEST_STALL_AFTER_CHECKPOINT: stalling after checkpoint {}",
                       st.iteration);
          ::sleep(600);
        }
    }
  };
  bool stopped = false;
  int64_t last_saved = trainer.iteration();
  try {
    trainer.run(
        [&] {
          stopped = agree_to_stop(coll);
          return stopped;
        },
        [&](const IterationStats& s) {
          if (rank == 0) {
            TrainerState st = trainer.state();
            metrics->row(s, st.wall_seconds, st.episodes);
            char extra[160];
            std::snprintf(extra, sizeof extra, "mean %.0f us (x%.3f of start)  entropy %.3f",
                          s.mean_runtime_us, s.mean_ratio, s.entropy);
            progress->update(s.iteration, extra);
          }
          if (s.iteration % cfg.checkpoint_every == 0) {
            verify_identical_params(trainer, coll);
            publish();
            last_saved = s.iteration;
          }
          if (evaluator && cfg.eval_every > 0 && s.iteration % cfg.eval_every == 0) {
            evaluate();
            last_eval = s.iteration;
          }
          if (test_exit_now(rank, s.iteration)) throw TestEarlyExit{};
        });
  } catch (const TestEarlyExit&) {
    spdlog::warn("PLACETO_TEST_EXIT_AT_ITERATION: rank {} leaves after iteration {}, exit code 0",
                 rank, trainer.iteration());
    return kExitDone;
  }
  if (trainer.iteration() != last_saved) publish();
  if (evaluator && !stopped && trainer.iteration() != last_eval) evaluate();
  if (progress) progress->finish();
  verify_identical_params(trainer, coll);
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
