#include "learner/training_run.h"

#include <spdlog/spdlog.h>
#include <torch/torch.h>
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
#include "training/metrics_csv.h"
#include "training/trainers.h"

namespace placeto {

namespace {

const std::vector<std::string> kResumeMayChange = {
    "iterations", "checkpoint_every", "keep_checkpoints",     "eval_every", "eval_samples",
    "comm",       "log_level",        "collective_timeout_s", "family_dir"};

constexpr char kMetricsHeader[] =
    "iteration,wall_s,episodes,mean_runtime_us,best_runtime_us,mean_ratio_to_start,"
    "baseline,entropy,loss,grad_norm,lr,episodes_per_s,allreduce_s,sim_s,policy_s,"
    "adv_mean,adv_sd,move_fraction,best_ratio_to_start,grad_cosine,value_loss,clip_fraction,"
    "kl_to_warm_start";

void metrics_row(MetricsCsv& csv, const IterationStats& s, double wall, int64_t episodes) {
  csv.rowf(
      "%lld,%.3f,%lld,%.6f,%.6f,%.6f,%.6g,%.6g,%.6g,%.6g,%.6g,%.4f,%.6f,%.6f,%.6f,"
      "%.6g,%.6g,%.6f,%.6f,%.6g,%.6g,%.4f,%.6g",
      static_cast<long long>(s.iteration), wall, static_cast<long long>(episodes),
      s.mean_runtime_us, s.best_runtime_us, s.mean_ratio, s.baseline, s.entropy, s.loss,
      s.grad_norm, s.lr, s.episodes_per_s, s.allreduce_s, s.sim_s, s.policy_s, s.adv_mean, s.adv_sd,
      s.move_fraction, s.best_ratio, s.grad_cosine, s.value_loss, s.clip_fraction, s.kl);
}

// Thrown to leave the run cleanly at RunOptions::test_exit_iteration.
struct TestEarlyExit {};

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
  if (in.cfg.env.memory_penalty_s_per_gb > 0 && in.cluster.has_memory_limits())
    throw InputError(options.config_path +
                     ": env.memory_penalty_s_per_gb: must be 0 when the "
                     "cluster " +
                     in.cfg.cluster +
                     " has memory capacities (the reward follows "
                     "the memory rule there), got " +
                     std::to_string(in.cfg.env.memory_penalty_s_per_gb));
  return in;
}

// --resume auto|PATH: restores the trainer from a checkpoint whose config matches (keys in
// kResumeMayChange may differ).  --resume none refuses a directory that holds checkpoints.
void resume_if_asked(const RunOptions& options, const RunInputs& in, const ParamLayout& layout,
                     CheckpointStore& store, Trainer* trainer, Communicator& comm) {
  std::optional<Resumed> r = load_resume_checkpoint(options, store, comm);
  if (!r) return;
  // Through the parser first, so that keys added since the checkpoint was written compare
  // as their defaults.
  check_config_matches(train_config_to_yaml(parse_train_config(
                           r->data.config_yaml, r->path + " (/meta config_yaml)", {})),
                       in.config_yaml, kResumeMayChange, r->path);
  trainer->restore(trainer_state_from_checkpoint(r->data, layout, in.cfg.baseline_window, r->path));
  if (r->data.world_size != comm.size())
    spdlog::warn("resuming a run of {} ranks with {} ranks: it continues, but not bit-exactly",
                 r->data.world_size, comm.size());
  spdlog::info("resuming from {} at iteration {} ({} episodes)", r->path, r->data.step,
               r->data.episodes);
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
    publish_checkpoint(store_,
                       trainer_state_to_checkpoint(st, layout_, in_.config_yaml, in_.cfg.seed),
                       st.iteration, options_);
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

int run_training(const RunOptions& options, Communicator& comm) {
  const int rank = comm.rank();
  const RunInputs in = load_run_inputs(options);
  const TrainConfig& cfg = in.cfg;
  torch::set_num_threads(1);
  const RunDirectory run_dir(options, cfg.log_level, comm);

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
    metrics = std::make_unique<MetricsCsv>(options.run_dir + "/metrics.csv", kMetricsHeader,
                                           trainer.iteration() == 0);
    progress = std::make_unique<ProgressLine>("train", cfg.iterations, "it");
  }
  EvaluationRecorder evaluation(options, in, layout, comm);
  CheckpointPublisher checkpoints(options, in, layout, store, rank);
  bool stopped = false;
  int64_t last_saved = trainer.iteration();
  auto after_iteration = [&](const IterationStats& s) {
    if (rank == 0) {
      TrainerState st = trainer.state();
      metrics_row(*metrics, s, st.wall_seconds, st.episodes);
      char extra[160];
      std::snprintf(extra, sizeof extra, "mean %.0f us (x%.3f of start)  entropy %.3f",
                    s.mean_runtime_us, s.mean_ratio, s.entropy);
      progress->update(s.iteration, extra);
    }
    if (s.iteration % cfg.checkpoint_every == 0) {
      verify_identical_params(trainer.state().params, trainer.iteration(), comm);
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
  verify_identical_params(trainer.state().params, trainer.iteration(), comm);
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

TrainerInfo placeto_trainer_info() {
  TrainerInfo t;
  t.name = "placeto";
  t.top_key = "";
  t.comm_options = [](const RunOptions& o) {
    const TrainConfig cfg = load_train_config(o.config_path, o.overrides);
    CommOptions co;
    co.deterministic = true;
    co.backend = enum_name(cfg.comm, kCommBackendNames);
    co.timeout_s = cfg.collective_timeout_s;
    return co;
  };
  t.run = run_training;
  return t;
}

}  // namespace placeto
