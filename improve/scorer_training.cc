#include "improve/scorer_training.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <memory>
#include <numeric>
#include <optional>

#include "common/checkpoint/checkpoint_compat.h"
#include "common/checkpoint/checkpoint_store.h"
#include "common/error.h"
#include "common/files.h"
#include "common/progress.h"
#include "common/rng.h"
#include "improve/labelling.h"
#include "improve/move_scorer.h"
#include "improve/scorer_config.h"
#include "improve/scorer_rl.h"
#include "improve/what_if.h"
#include "sim/cluster.h"
#include "sim/families/family.h"
#include "sim/placers/memory.h"
#include "training/adam.h"
#include "training/metrics_csv.h"
#include "training/trainers.h"

namespace placeto {
namespace {

constexpr char kMetricsHeader[] =
    "epoch,loss,top1_improving,top1_best,lr,states,seconds,phase,rl_final_to_start,"
    "rl_improved";

std::vector<int> device_counts(const std::vector<Cluster>& clusters) {
  std::vector<int> d;
  for (const Cluster& c : clusters) d.push_back(c.num_devices());
  return d;
}

// What the three parts share: the config, the clusters and jobs, the scorer and its
// optimizer, and the harness's outputs.
struct ScorerRun {
  ScorerRun(const RunOptions& o, Communicator& c, ScorerTrainConfig config, std::vector<Cluster> cl)
      : options(o),
        comm(c),
        cfg(std::move(config)),
        config_yaml(scorer_train_config_to_yaml(cfg)),
        clusters(std::move(cl)),
        jobs(label_jobs(cfg, device_counts(clusters))),
        scorer(ScorerShape{cfg.features > 0 ? cfg.features : WhatIf::kNumFeatures, cfg.hidden1,
                           cfg.hidden2}),
        adam(scorer.num_params()),
        t_begin(std::chrono::steady_clock::now()) {
    scorer.init(static_cast<uint64_t>(cfg.seed));
  }

  const RunOptions& options;
  Communicator& comm;
  ScorerTrainConfig cfg;
  std::string config_yaml;
  std::vector<Cluster> clusters;
  // Per cluster: 0, or the capacity factor that job_cluster applies to each graph.
  std::vector<double> memory_factor;
  std::vector<LabelJob> jobs;
  MoveScorer scorer;
  Adam adam;
  std::unique_ptr<CheckpointStore> store;
  std::unique_ptr<MetricsCsv> metrics;     // rank 0
  std::unique_ptr<ProgressLine> progress;  // rank 0
  std::vector<float> grad;
  int64_t first_epoch = 0;
  int64_t total_states = 0;
  std::chrono::steady_clock::time_point t_begin;

  int rank() const { return comm.rank(); }
  // The cluster of job j on its graph g: capped at the job's factor of g's balanced share.
  Cluster job_cluster(const LabelJob& j, const Graph& g) const {
    const double f = memory_factor[static_cast<size_t>(j.cluster)];
    return f > 0 ? with_balanced_capacity(clusters[j.cluster], g, f) : clusters[j.cluster];
  }
  double seconds() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t_begin).count();
  }

  // One optimizer step, the same on every rank: `grad` summed over ranks, divided by the items
  // (states or starts) of the batch over all ranks, clipped.  Every rank calls it the same
  // number of times, even with an empty batch.
  void step_with_mean_gradient(double batch, double lr) {
    std::vector<double> n = {batch};
    comm.all_reduce(n.data(), 1, ReduceOp::kSum);
    comm.all_reduce(grad.data(), grad.size(), ReduceOp::kSum);
    if (n[0] == 0) return;
    for (float& x : grad) x = static_cast<float>(x / n[0]);
    clip_global_norm(grad.data(), grad.size(), cfg.grad_clip);
    adam.update(scorer.params().data(), grad.data(), lr);
  }

  // After epoch `epoch` (0-based): the parameter-identity check, the checkpoint (rank 0),
  // then whether every rank stops (a signal, or the test hook
  // PLACETO_TEST_EXIT_AT_ITERATION=RANK:EPOCH: every rank stops, as after a preemption).
  bool end_epoch(int64_t epoch) {
    verify_identical_params(scorer.params(), epoch + 1, comm);
    if (rank() == 0) {
      CheckpointData data;
      data.step = epoch + 1;
      data.episodes = total_states;
      data.world_size = comm.size();
      data.config_yaml = config_yaml;
      scorer.to_checkpoint(&data);
      const int64_t np = static_cast<int64_t>(scorer.num_params());
      data.optim_exp_avg["scorer"] = NamedArray::from_floats({np}, adam.exp_avg());
      data.optim_exp_avg_sq["scorer"] = NamedArray::from_floats({np}, adam.exp_avg_sq());
      data.optim_step = adam.step();
      data.counters["epoch"] = epoch + 1;
      data.counters["states"] = total_states;
      publish_checkpoint(*store, std::move(data), epoch + 1, options);
    }
    const bool test_stop = options.test_exit_iteration == epoch + 1;
    if (agree_to_stop(comm) || test_stop) {
      spdlog::warn("stopping after epoch {} (signal); continue with --resume auto", epoch + 1);
      return true;
    }
    return false;
  }
};

// Restores the scorer, its optimizer and the epoch from a checkpoint whose config matches
// (only epochs and rl_epochs may change; epochs not once RL has begun).
void restore(ScorerRun& run, const Resumed& r) {
  const ScorerTrainConfig old =
      parse_scorer_train_config(r.data.config_yaml, r.path + " (/meta config_yaml)", {});
  // The rl_ settings bind only once a run has used them (rl_epochs > 0 in the checkpoint).
  std::vector<std::string> may_change = {"epochs", "rl_epochs"};
  if (old.rl_epochs == 0)
    for (const char* k : {"rl_episodes", "rl_steps", "rl_temperature", "rl_lr", "rl_batch"})
      may_change.push_back(k);
  for (std::string& k : may_change) k = std::string(kScorerConfigKey) + "." + k;
  MoveScorer saved = MoveScorer::from_checkpoint(r.data, r.path);
  // A scorer narrower than this build's what-if rows is from before issue #33 (27 columns):
  // its config, which does not say `features`, means that width, and a run resumed without
  // `features` goes on with it.
  const int width = saved.shape().inputs;
  ScorerTrainConfig old_cmp = old;
  if (width < WhatIf::kNumFeatures) {
    if (old_cmp.features == 0) old_cmp.features = width;
    if (run.cfg.features == 0) {
      spdlog::info(
          "the checkpoint's scorer reads the first {} what-if columns; training goes "
          "on with them (features: {})",
          width, width);
      run.cfg.features = width;
      run.config_yaml = scorer_train_config_to_yaml(run.cfg);
      run.adam = Adam(saved.num_params());
    }
  }
  try {
    check_config_matches(scorer_train_config_to_yaml(old_cmp), run.config_yaml, may_change, r.path);
  } catch (const InputError& e) {
    throw InputError(run.options.run_dir +
                     ": the checkpoint was written with another search_policy config (only "
                     "epochs and rl_epochs may change on resume); resume with the same config: " +
                     e.what());
  }
  if (r.data.step > old.epochs && run.cfg.epochs != old.epochs)
    throw InputError(run.options.run_dir + ": the imitation ended at epoch " +
                     std::to_string(old.epochs) +
                     " and RL has begun; epochs cannot change now (change rl_epochs)");
  run.scorer = std::move(saved);
  if (run.scorer.num_params() != run.adam.size())
    throw InputError(run.options.run_dir + ": the checkpoint's scorer has another shape (" +
                     std::to_string(run.scorer.shape().inputs) + " inputs; the config's " +
                     "`features` asks for " + std::to_string(run.cfg.features) + ")");
  for (const auto& [name, arr] : r.data.optim_exp_avg)
    if (name == "scorer") run.adam.exp_avg() = arr.to_floats();
  for (const auto& [name, arr] : r.data.optim_exp_avg_sq)
    if (name == "scorer") run.adam.exp_avg_sq() = arr.to_floats();
  if (run.adam.exp_avg().size() != run.scorer.num_params() ||
      run.adam.exp_avg_sq().size() != run.scorer.num_params())
    throw InputError(run.options.run_dir + ": the checkpoint's optimizer state does not match");
  run.adam.set_step(r.data.optim_step);
  run.first_epoch = r.data.step;
  spdlog::info("resumed at epoch {}", run.first_epoch);
}

// Part 1: this rank's share of the labelled states, the feature standardization from every
// rank's rows (a fresh run only), and the state counts.
std::vector<TeacherState> label(ScorerRun& run, const std::optional<Resumed>& resumed,
                                double* mean_gain) {
  const bool imitating = run.first_epoch < run.cfg.epochs;
  const int rank = run.rank(), size = run.comm.size();
  std::vector<TeacherState> states;
  TeacherOptions to;
  to.max_moves = run.cfg.max_moves;
  to.keep_rows = run.cfg.keep_rows;
  to.sharpness = run.cfg.sharpness;
  int64_t simulations = 0;
  {
    std::unique_ptr<ProgressLine> progress;
    const int64_t mine =
        imitating ? (static_cast<int64_t>(run.jobs.size()) - rank + size - 1) / size : 0;
    if (rank == 0 && imitating)
      progress = std::make_unique<ProgressLine>("label", mine, "trajectories");
    int64_t done = 0;
    for (size_t k = static_cast<size_t>(rank); imitating && k < run.jobs.size();
         k += static_cast<size_t>(size)) {
      const LabelJob& j = run.jobs[k];
      const Graph g = label_job_graph(run.cfg, j);
      const Cluster c = run.job_cluster(j, g);
      const Placement start = label_job_start(run.cfg, j, k, g, c);
      const uint64_t job_seed = derive_seed(static_cast<uint64_t>(run.cfg.seed), k);
      simulations += teacher_trajectory(g, c, start, nullptr, to, job_seed, &states);
      if (progress) progress->update(++done, std::to_string(states.size()) + " states");
    }
    if (progress) progress->finish(std::to_string(states.size()) + " states");
  }
  constexpr int kF = WhatIf::kNumFeatures;
  std::vector<double> acc(2 * kF + 1, 0.0);
  for (const TeacherState& s : states) {
    const size_t rows = s.target.size();
    for (size_t r = 0; r < rows; ++r)
      for (int k = 0; k < kF; ++k) {
        const double x = s.features[r * kF + k];
        acc[k] += x;
        acc[kF + k] += x * x;
      }
    acc.back() += static_cast<double>(rows);
  }
  run.comm.all_reduce(acc.data(), acc.size(), ReduceOp::kSum);
  if (!resumed) {
    const double n = std::max(1.0, acc.back());
    for (int k = 0; k < run.scorer.shape().inputs; ++k) {  // the columns the scorer reads
      const double m = acc[k] / n;
      const double var = std::max(0.0, acc[kF + k] / n - m * m);
      run.scorer.feature_mean()[k] = static_cast<float>(m);
      run.scorer.feature_scale()[k] = var > 1e-12 ? static_cast<float>(1 / std::sqrt(var)) : 1.0f;
    }
  }
  std::vector<double> counts = {static_cast<double>(states.size()),
                                static_cast<double>(simulations)};
  run.comm.all_reduce(counts.data(), counts.size(), ReduceOp::kSum);
  run.total_states = static_cast<int64_t>(counts[0]);
  if (!imitating) {  // resumed in the RL epochs: the count the labelling had
    const auto it = resumed->data.counters.find("states");
    if (it != resumed->data.counters.end()) run.total_states = it->second;
  }
  std::vector<double> gain_sum = {0.0};
  for (const TeacherState& s : states) gain_sum[0] += s.best_gain;
  run.comm.all_reduce(gain_sum.data(), 1, ReduceOp::kSum);
  *mean_gain = std::max(1e-12, gain_sum[0] / std::max<int64_t>(1, run.total_states));
  if (run.total_states == 0 && imitating)
    throw InputError(run.options.config_path +
                     ": the teacher found no improving move on any start "
                     "(every start is a local optimum): nothing to imitate");
  if (imitating)
    spdlog::info("labelled {} states with {} simulations", run.total_states,
                 static_cast<int64_t>(counts[1]));
  return states;
}

// Part 2: the imitation epochs.  False when the run stopped.
bool imitate(ScorerRun& run, std::vector<TeacherState>& states, double mean_gain) {
  const ScorerTrainConfig& cfg = run.cfg;
  const int rank = run.rank();
  const int64_t steps_per_epoch = std::max<int64_t>(
      1, run.comm.all_reduce_max((static_cast<int64_t>(states.size()) + cfg.batch_states - 1) /
                                 cfg.batch_states));
  std::vector<float> scores;
  std::vector<size_t> order(states.size());
  for (int64_t epoch = run.first_epoch; epoch < cfg.epochs; ++epoch) {
    const double lr =
        cfg.epochs > 1 ? linear_schedule(cfg.lr, cfg.lr_final, epoch, cfg.epochs) : cfg.lr_final;
    Rng rng(derive_seed(static_cast<uint64_t>(cfg.seed) + 7919u * static_cast<uint64_t>(rank),
                        static_cast<uint64_t>(epoch)));
    std::iota(order.begin(), order.end(), 0);
    shuffle_in_place(order, rng.engine());
    std::vector<double> stats(4, 0.0);  // loss sum, top-1 improving, top-1 best, states
    for (int64_t step = 0; step < steps_per_epoch; ++step) {
      std::fill(run.grad.begin(), run.grad.end(), 0.0f);
      double batch = 0;
      for (int b = 0; b < cfg.batch_states && !order.empty(); ++b) {
        const size_t at = static_cast<size_t>(step * cfg.batch_states + b);
        if (at >= order.size()) break;
        TeacherState& s = states[order[at]];
        const size_t rows = s.target.size();
        // States where the best move gains more weigh more: missing it costs more.
        const double weight = cfg.gain_weighting ? s.best_gain / mean_gain : 1.0;
        scores.resize(rows);
        stats[0] +=
            run.scorer.listwise_loss(s.features.data(), rows, s.target.data(), run.grad.data(),
                                     weight, scores.data(), 1.0, WhatIf::kNumFeatures);
        const size_t top =
            static_cast<size_t>(std::max_element(scores.begin(), scores.end()) - scores.begin());
        const size_t best = static_cast<size_t>(std::max_element(s.target.begin(), s.target.end()) -
                                                s.target.begin());
        stats[1] += s.target[top] > 0 ? 1 : 0;
        stats[2] += top == best ? 1 : 0;
        stats[3] += 1;
        batch += 1;
      }
      run.step_with_mean_gradient(batch, lr);
    }
    run.comm.all_reduce(stats.data(), stats.size(), ReduceOp::kSum);
    const double seen = std::max(1.0, stats[3]);
    spdlog::info("epoch {}: loss {:.4f}, top-1 improving {:.3f}, top-1 best {:.3f}", epoch + 1,
                 stats[0] / seen, stats[1] / seen, stats[2] / seen);
    if (rank == 0) {
      run.metrics->rowf("%lld,%.6f,%.4f,%.4f,%.6g,%lld,%.1f,imitate,,",
                        static_cast<long long>(epoch + 1), stats[0] / seen, stats[1] / seen,
                        stats[2] / seen, lr, static_cast<long long>(run.total_states),
                        run.seconds());
      run.progress->update(epoch + 1 - run.first_epoch,
                           "loss " + std::to_string(stats[0] / seen).substr(0, 6));
    }
    if (run.end_epoch(epoch)) return false;
  }
  return true;
}

// Part 3: the RL epochs from the imitated scorer.  False when the run stopped.
bool reinforce(ScorerRun& run) {
  const ScorerTrainConfig& cfg = run.cfg;
  const int rank = run.rank(), size = run.comm.size();
  // This rank's starts, built once: (graph, cluster, start placement).
  struct RlJob {
    const Graph* graph;
    Cluster cluster;
    Placement start;
    size_t index;
  };
  std::map<std::pair<std::string, int>, Graph> graphs;
  std::vector<RlJob> mine;
  for (size_t k = static_cast<size_t>(rank); k < run.jobs.size(); k += static_cast<size_t>(size)) {
    const LabelJob& j = run.jobs[k];
    auto it = graphs.find({j.family, j.graph});
    if (it == graphs.end())
      it = graphs.emplace(std::make_pair(j.family, j.graph), label_job_graph(cfg, j)).first;
    Cluster c = run.job_cluster(j, it->second);
    Placement start = label_job_start(cfg, j, k, it->second, c);
    mine.push_back({&it->second, std::move(c), std::move(start), k});
  }
  const int64_t steps_per_epoch = std::max<int64_t>(
      1, run.comm.all_reduce_max((static_cast<int64_t>(mine.size()) + cfg.rl_batch - 1) /
                                 cfg.rl_batch));
  ReinforceOptions ro;
  ro.episodes = cfg.rl_episodes;
  ro.steps = cfg.rl_steps;
  ro.temperature = cfg.rl_temperature;
  const int64_t all_epochs = static_cast<int64_t>(cfg.epochs) + cfg.rl_epochs;
  for (int64_t epoch = std::max<int64_t>(run.first_epoch, cfg.epochs); epoch < all_epochs;
       ++epoch) {
    // The hand-over: a fresh optimizer (the imitation's moments would size the first steps).
    if (epoch == cfg.epochs) run.adam = Adam(run.scorer.num_params());
    std::vector<double> stats(4, 0.0);  // sum of final/start, improved fraction, starts, loss
    for (int64_t step = 0; step < steps_per_epoch; ++step) {
      std::fill(run.grad.begin(), run.grad.end(), 0.0f);
      double batch = 0;
      for (int b = 0; b < cfg.rl_batch; ++b) {
        const size_t at = static_cast<size_t>(step * cfg.rl_batch + b);
        if (at >= mine.size()) break;
        const RlJob& j = mine[at];
        const uint64_t seed = derive_seed(
            derive_seed(static_cast<uint64_t>(cfg.seed) + 104729u, static_cast<uint64_t>(epoch)),
            j.index);
        const ReinforceStats rs =
            reinforce_moves(*j.graph, j.cluster, j.start, run.scorer, ro, seed, run.grad.data());
        stats[0] += rs.mean_final_score / rs.start_score;
        stats[1] += rs.improved_fraction;
        stats[2] += 1;
        batch += 1;
      }
      run.step_with_mean_gradient(batch, cfg.rl_lr);
    }
    run.comm.all_reduce(stats.data(), stats.size(), ReduceOp::kSum);
    const double seen = std::max(1.0, stats[2]);
    spdlog::info("epoch {} (RL): best / start {:.4f}, improving proposals {:.3f}", epoch + 1,
                 stats[0] / seen, stats[1] / seen);
    if (rank == 0) {
      run.metrics->rowf("%lld,,,,%.6g,%lld,%.1f,rl,%.6f,%.4f", static_cast<long long>(epoch + 1),
                        cfg.rl_lr, static_cast<long long>(run.total_states), run.seconds(),
                        stats[0] / seen, stats[1] / seen);
      run.progress->update(epoch + 1 - run.first_epoch,
                           "best/start " + std::to_string(stats[0] / seen).substr(0, 6));
    }
    if (run.end_epoch(epoch)) return false;
  }
  return true;
}

}  // namespace

int run_scorer_training(const RunOptions& options, Communicator& comm) {
  // Every input is read and checked before the run directory is touched.
  const ScorerTrainConfig cfg = load_scorer_train_config(options.config_path, options.overrides);
  std::vector<Cluster> clusters;
  for (int d : cfg.devices) clusters.push_back(resolve_cluster("", d));
  for (const std::string& file : cfg.clusters) clusters.push_back(load_cluster(file));
  std::vector<double> factor(clusters.size(), 0.0);
  for (double f : cfg.memory_factors)
    for (int d : cfg.devices) {
      clusters.push_back(resolve_cluster("", d));
      factor.push_back(f);
    }
  ScorerRun run(options, comm, cfg, std::move(clusters));
  run.memory_factor = std::move(factor);

  const RunDirectory dir(options, "info", comm);
  run.store = std::make_unique<CheckpointStore>(dir.checkpoints(), cfg.keep_checkpoints);
  const std::optional<Resumed> resumed = load_resume_checkpoint(options, *run.store, comm);
  if (resumed) restore(run, *resumed);
  if (comm.rank() == 0) write_file_atomic(options.run_dir + "/config.yaml", run.config_yaml);

  double mean_gain = 1;
  std::vector<TeacherState> states = label(run, resumed, &mean_gain);
  run.grad.assign(run.scorer.num_params(), 0.0f);
  const int64_t all_epochs = static_cast<int64_t>(cfg.epochs) + cfg.rl_epochs;
  if (comm.rank() == 0) {
    run.metrics = std::make_unique<MetricsCsv>(options.run_dir + "/metrics.csv", kMetricsHeader,
                                               !resumed, std::vector<std::string>{"imitate"});
    // Counts this process's epochs (a resumed run's rate and ETA are its own).
    run.progress = std::make_unique<ProgressLine>("train", all_epochs - run.first_epoch, "epochs");
  }
  if (!imitate(run, states, mean_gain)) return kExitRequeue;
  if (cfg.rl_epochs > 0 && !reinforce(run)) return kExitRequeue;
  if (run.progress) run.progress->finish();
  if (comm.rank() == 0)
    std::printf(
        "learned-search scorer trained: %lld states, %d epochs + %d RL epochs; checkpoint "
        "%s/LATEST\n",
        static_cast<long long>(run.total_states), cfg.epochs, cfg.rl_epochs,
        dir.checkpoints().c_str());
  return kExitDone;
}

void register_scorer_trainer() {
  TrainerInfo t;
  t.name = "scorer";
  t.top_key = kScorerConfigKey;
  t.comm_options = [](const RunOptions&) {
    CommOptions co;
    co.deterministic = true;
    return co;
  };
  t.run = run_scorer_training;
  register_trainer(std::move(t));
}

}  // namespace placeto
