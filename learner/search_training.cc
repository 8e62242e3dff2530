#include "learner/search_training.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <memory>
#include <numeric>
#include <sstream>

#include "common/checkpoint/checkpoint_store.h"
#include "common/error.h"
#include "common/files.h"
#include "common/logging.h"
#include "common/progress.h"
#include "common/rng.h"
#include "common/yaml_util.h"
#include "improve/learned_search.h"
#include "improve/move_scorer.h"
#include "improve/what_if.h"
#include "learner/adam.h"
#include "sim/cluster.h"
#include "sim/families/family.h"
#include "sim/placers/registry.h"

namespace placeto {
namespace {

constexpr const char* kTopKey = "search_policy";

const std::vector<std::string> kKeys = {
    "families",  "graphs",       "graph_seed", "devices",          "clusters",
    "starts",    "perturb",      "max_moves",  "keep_rows",        "sharpness",
    "epochs",    "batch_states", "lr",         "lr_end",           "clip_norm",
    "hidden1",   "hidden2",      "seed",       "keep_checkpoints", "gain_weighting",
    "rl_epochs", "rl_episodes",  "rl_steps",   "rl_temperature",   "rl_lr",
    "rl_batch"};

std::vector<std::string> string_list(const YamlField& f) {
  std::vector<std::string> out;
  if (!f.defined()) return out;
  if (!f.is_sequence()) f.fail("must be a list");
  for (size_t i = 0; i < f.size(); ++i) out.push_back(f.at(i).as_string());
  return out;
}

// One labelled trajectory's worth of work.
struct Job {
  std::string family;
  int graph = 0;
  int cluster = 0;  // index into the clusters trained on
  int start = 0;
};

Graph job_graph(const SearchTrainConfig& cfg, const Job& j) {
  const FamilySpec spec = resolve_family_spec(default_family_spec(j.family));
  return generate_graph(spec, j.graph, static_cast<uint64_t>(cfg.graph_seed));
}

// The start of trajectory k: the best fast placement, with a share `perturb` of its ops moved
// to random devices for the starts after the first.
Placement job_start(const SearchTrainConfig& cfg, const Job& j, size_t k, const Graph& g,
                    const Cluster& c) {
  PlacerOptions po;
  po.seed = cfg.seed;
  Placement start = best_fast_placement(g, c, po);
  if (j.start > 0) {
    Rng rng(derive_seed(static_cast<uint64_t>(cfg.seed), k));
    for (auto& d : start.device)
      if (rng.uniform01() < cfg.perturb) d = static_cast<int32_t>(rng.below(c.num_devices()));
  }
  return start;
}

}  // namespace

bool is_search_training_config(const std::string& path) {
  try {
    const YAML::Node n = load_yaml_file(path);
    return n.IsMap() && n[kTopKey].IsDefined();
  } catch (const std::exception&) {
    return false;
  }
}

SearchTrainConfig load_search_train_config(const std::string& path,
                                           const std::vector<std::string>& overrides) {
  YAML::Node root = load_yaml_file(path);
  if (!root.IsMap() || !root[kTopKey].IsDefined() || !root[kTopKey].IsMap())
    throw InputError(path + ": expected a map under the top-level key '" + kTopKey + "'");
  YAML::Node node = root[kTopKey];
  for (const std::string& o : overrides) {
    const size_t eq = o.find('=');
    if (eq == std::string::npos || eq == 0)
      throw InputError("override '" + o + "': expected key=value");
    const std::string key = o.substr(0, eq);
    if (std::find(kKeys.begin(), kKeys.end(), key) == kKeys.end())
      throw InputError("override '" + o + "': unknown key '" + key + "' of " + kTopKey);
    node[key] = parse_yaml_text(o.substr(eq + 1), "override '" + o + "'");
  }
  const YamlField f(node, path, kTopKey);
  f.check_keys(kKeys);
  SearchTrainConfig c;
  if (f.has("families")) c.families = string_list(f.at("families"));
  f.get("graphs", &c.graphs);
  f.get("graph_seed", &c.graph_seed);
  if (f.has("devices")) {
    const YamlField d = f.at("devices");
    if (!d.is_sequence()) d.fail("must be a list of device counts");
    c.devices.clear();
    for (size_t i = 0; i < d.size(); ++i) {
      const int64_t v = d.at(i).as_int();
      if (v < 2 || v > 64) d.at(i).fail("a device count must be in [2, 64]");
      c.devices.push_back(static_cast<int>(v));
    }
  }
  if (f.has("clusters")) c.clusters = string_list(f.at("clusters"));
  f.get("starts", &c.starts);
  f.get("perturb", &c.perturb);
  f.get("max_moves", &c.max_moves);
  f.get("keep_rows", &c.keep_rows);
  f.get("sharpness", &c.sharpness);
  f.get("epochs", &c.epochs);
  f.get("batch_states", &c.batch_states);
  f.get("lr", &c.lr);
  f.get("lr_end", &c.lr_end);
  f.get("clip_norm", &c.clip_norm);
  f.get("hidden1", &c.hidden1);
  f.get("hidden2", &c.hidden2);
  f.get("seed", &c.seed);
  f.get("keep_checkpoints", &c.keep_checkpoints);
  f.get("gain_weighting", &c.gain_weighting);
  f.get("rl_epochs", &c.rl_epochs);
  f.get("rl_episodes", &c.rl_episodes);
  f.get("rl_steps", &c.rl_steps);
  f.get("rl_temperature", &c.rl_temperature);
  f.get("rl_lr", &c.rl_lr);
  f.get("rl_batch", &c.rl_batch);
  auto need = [&](bool ok, const std::string& key, const std::string& rule) {
    if (!ok) f.at(key).fail(rule);
  };
  for (const std::string& fam : c.families) (void)default_family_spec(fam);  // names checked
  need(c.graphs >= 1 && c.graphs <= 10000, "graphs", "must be in [1, 10000]");
  need(c.devices.size() + c.clusters.size() >= 1, "devices", "no devices and no clusters");
  need(!c.families.empty(), "families", "must name at least one family");
  need(c.starts >= 1 && c.starts <= 100, "starts", "must be in [1, 100]");
  need(c.perturb >= 0 && c.perturb <= 1, "perturb", "must be in [0, 1]");
  need(c.max_moves >= 1 && c.max_moves <= 100000, "max_moves", "must be in [1, 100000]");
  need(c.keep_rows >= 2 && c.keep_rows <= 100000, "keep_rows", "must be in [2, 100000]");
  need(c.sharpness > 0 && c.sharpness <= 100, "sharpness", "must be in (0, 100]");
  need(c.epochs >= 1 && c.epochs <= 100000, "epochs", "must be in [1, 100000]");
  need(c.batch_states >= 1 && c.batch_states <= 100000, "batch_states", "must be in [1, 100000]");
  need(c.lr > 0 && c.lr < 1, "lr", "must be in (0, 1)");
  need(c.lr_end > 0 && c.lr_end <= c.lr, "lr_end", "must be in (0, lr]");
  need(c.clip_norm >= 0, "clip_norm", "must be >= 0 (0: no clipping)");
  need(c.hidden1 >= 1 && c.hidden1 <= 1024, "hidden1", "must be in [1, 1024]");
  need(c.hidden2 >= 1 && c.hidden2 <= 1024, "hidden2", "must be in [1, 1024]");
  need(c.keep_checkpoints >= 1, "keep_checkpoints", "must be >= 1");
  need(c.rl_epochs >= 0 && c.rl_epochs <= 100000, "rl_epochs", "must be in [0, 100000]");
  need(c.rl_episodes >= 2 && c.rl_episodes <= 1000, "rl_episodes",
       "must be in [2, 1000] (the baseline is the other episodes' mean)");
  need(c.rl_steps >= 1 && c.rl_steps <= 100000, "rl_steps", "must be in [1, 100000]");
  need(c.rl_temperature > 0 && c.rl_temperature <= 100, "rl_temperature", "must be in (0, 100]");
  need(c.rl_lr > 0 && c.rl_lr < 1, "rl_lr", "must be in (0, 1)");
  need(c.rl_batch >= 1 && c.rl_batch <= 100000, "rl_batch", "must be in [1, 100000]");
  return c;
}

std::string search_train_config_to_yaml(const SearchTrainConfig& c) {
  YAML::Emitter e;
  e << YAML::BeginMap << YAML::Key << kTopKey << YAML::Value << YAML::BeginMap;
  e << YAML::Key << "families" << YAML::Value << YAML::Flow << c.families;
  e << YAML::Key << "graphs" << YAML::Value << c.graphs;
  e << YAML::Key << "graph_seed" << YAML::Value << c.graph_seed;
  e << YAML::Key << "devices" << YAML::Value << YAML::Flow << c.devices;
  e << YAML::Key << "clusters" << YAML::Value << YAML::Flow << c.clusters;
  e << YAML::Key << "starts" << YAML::Value << c.starts;
  e << YAML::Key << "perturb" << YAML::Value << c.perturb;
  e << YAML::Key << "max_moves" << YAML::Value << c.max_moves;
  e << YAML::Key << "keep_rows" << YAML::Value << c.keep_rows;
  e << YAML::Key << "sharpness" << YAML::Value << c.sharpness;
  e << YAML::Key << "epochs" << YAML::Value << c.epochs;
  e << YAML::Key << "batch_states" << YAML::Value << c.batch_states;
  e << YAML::Key << "lr" << YAML::Value << c.lr;
  e << YAML::Key << "lr_end" << YAML::Value << c.lr_end;
  e << YAML::Key << "clip_norm" << YAML::Value << c.clip_norm;
  e << YAML::Key << "hidden1" << YAML::Value << c.hidden1;
  e << YAML::Key << "hidden2" << YAML::Value << c.hidden2;
  e << YAML::Key << "seed" << YAML::Value << c.seed;
  e << YAML::Key << "keep_checkpoints" << YAML::Value << c.keep_checkpoints;
  e << YAML::Key << "gain_weighting" << YAML::Value << c.gain_weighting;
  if (c.rl_epochs > 0) {  // configs without RL keep the bytes they had (checkpoints compare them)
    e << YAML::Key << "rl_epochs" << YAML::Value << c.rl_epochs;
    e << YAML::Key << "rl_episodes" << YAML::Value << c.rl_episodes;
    e << YAML::Key << "rl_steps" << YAML::Value << c.rl_steps;
    e << YAML::Key << "rl_temperature" << YAML::Value << c.rl_temperature;
    e << YAML::Key << "rl_lr" << YAML::Value << c.rl_lr;
    e << YAML::Key << "rl_batch" << YAML::Value << c.rl_batch;
  }
  e << YAML::EndMap << YAML::EndMap;
  return std::string(e.c_str()) + "\n";
}

int run_search_training(const RunOptions& options, Communicator& comm) {
  const auto t_begin = std::chrono::steady_clock::now();
  const SearchTrainConfig cfg = load_search_train_config(options.config_path, options.overrides);
  const std::string config_yaml = search_train_config_to_yaml(cfg);
  const int rank = comm.rank(), size = comm.size();

  // The run directory: rank 0 locks it; everyone logs to logs/rank_<r>.log.
  std::unique_ptr<FileLock> lock;
  std::string setup_error;
  if (rank == 0) {
    try {
      make_directories(options.run_dir);
      lock = std::make_unique<FileLock>(options.run_dir + "/run.lock", "the run directory",
                                        options.lock_wait_s);
      make_directories(options.run_dir + "/logs");
      make_directories(options.run_dir + "/checkpoints");
    } catch (const Error& e) {
      setup_error = e.what();
    }
  }
  const std::vector<double> sync = comm.all_gather_doubles({setup_error.empty() ? 0.0 : 1.0});
  if (!setup_error.empty()) throw InputError(setup_error);
  if (sync[0] != 0.0)
    throw InputError(options.run_dir + ": rank 0 could not take the run directory");
  LogOptions lo;
  lo.rank = rank;
  lo.file = options.run_dir + "/logs/rank_" + std::to_string(rank) + ".log";
  init_logging(lo);

  std::vector<Cluster> clusters;
  std::vector<std::string> cluster_names;
  for (int d : cfg.devices) {
    clusters.push_back(resolve_cluster("", d));
    cluster_names.push_back(std::to_string(d) + " devices");
  }
  for (const std::string& file : cfg.clusters) {
    clusters.push_back(load_cluster(file));
    cluster_names.push_back(file);
  }

  // Resume: the latest checkpoint's scorer, Adam moments and epoch.
  CheckpointStore store(options.run_dir + "/checkpoints", cfg.keep_checkpoints);
  MoveScorer scorer(ScorerShape{WhatIf::kNumFeatures, cfg.hidden1, cfg.hidden2});
  scorer.init(static_cast<uint64_t>(cfg.seed));
  Adam adam(scorer.num_params());
  int64_t first_epoch = 0;
  std::optional<CheckpointData> resumed;
  if (options.resume == "auto") {
    resumed = store.load_latest();
  } else if (options.resume != "none") {
    resumed = read_checkpoint_file(options.resume);
  } else if (!store.steps().empty()) {
    throw InputError(options.run_dir +
                     ": already holds checkpoints; pass --resume auto to continue the run, or "
                     "choose another --run-dir");
  }
  if (resumed) {
    // Only `epochs` may change on resume (to extend a run); the learning rate then decays
    // over the new count from the epoch reached.
    // So may rl_epochs (to add RL to a finished imitation run, or extend it); the other rl_
    // settings must stay once a run has used them.
    SearchTrainConfig same = cfg;
    const YAML::Node old_root = parse_yaml_text(resumed->config_yaml, "checkpoint config");
    if (old_root[kTopKey] && old_root[kTopKey]["epochs"])
      same.epochs = old_root[kTopKey]["epochs"].as<int>();
    same.rl_epochs = old_root[kTopKey] && old_root[kTopKey]["rl_epochs"]
                         ? old_root[kTopKey]["rl_epochs"].as<int>()
                         : 0;
    if (resumed->config_yaml != search_train_config_to_yaml(same))
      throw InputError(options.run_dir +
                       ": the checkpoint was written with another "
                       "search_policy config (only epochs and rl_epochs may change on resume); "
                       "resume with the same config");
    if (resumed->step > same.epochs && cfg.epochs != same.epochs)
      throw InputError(options.run_dir + ": the imitation ended at epoch " +
                       std::to_string(same.epochs) +
                       " and RL has begun; epochs cannot change now (change rl_epochs)");
    scorer = MoveScorer::from_checkpoint(*resumed, options.run_dir + "/checkpoints");
    if (scorer.num_params() != adam.size())
      throw InputError(options.run_dir + ": the checkpoint's scorer has another shape");
    for (const auto& [name, arr] : resumed->optim_exp_avg) {
      if (name != "scorer") continue;
      adam.exp_avg() = arr.to_floats();
    }
    for (const auto& [name, arr] : resumed->optim_exp_avg_sq) {
      if (name != "scorer") continue;
      adam.exp_avg_sq() = arr.to_floats();
    }
    if (adam.exp_avg().size() != scorer.num_params() ||
        adam.exp_avg_sq().size() != scorer.num_params())
      throw InputError(options.run_dir + ": the checkpoint's optimizer state does not match");
    adam.set_step(resumed->optim_step);
    first_epoch = resumed->step;
    spdlog::info("resumed at epoch {}", first_epoch);
  }
  if (rank == 0) write_file_atomic(options.run_dir + "/config.yaml", config_yaml);

  // Label this rank's share of the trajectories (not when resuming into the RL epochs).
  const bool imitating = first_epoch < cfg.epochs;
  std::vector<Job> jobs;
  for (const std::string& fam : cfg.families)
    for (int gi = 0; gi < cfg.graphs; ++gi)
      for (int ci = 0; ci < static_cast<int>(clusters.size()); ++ci)
        for (int s = 0; s < cfg.starts; ++s) jobs.push_back({fam, gi, ci, s});
  std::vector<TeacherState> states;
  TeacherOptions to;
  to.max_moves = cfg.max_moves;
  to.keep_rows = cfg.keep_rows;
  to.sharpness = cfg.sharpness;
  int64_t simulations = 0;
  {
    std::unique_ptr<ProgressLine> progress;
    const int64_t mine =
        imitating ? (static_cast<int64_t>(jobs.size()) - rank + size - 1) / size : 0;
    if (rank == 0 && imitating)
      progress = std::make_unique<ProgressLine>("label", mine, "trajectories");
    int64_t done = 0;
    for (size_t k = static_cast<size_t>(rank); imitating && k < jobs.size();
         k += static_cast<size_t>(size)) {
      const Job& j = jobs[k];
      const Graph g = job_graph(cfg, j);
      const Cluster& c = clusters[j.cluster];
      const Placement start = job_start(cfg, j, k, g, c);
      const uint64_t job_seed = derive_seed(static_cast<uint64_t>(cfg.seed), k);
      simulations += teacher_trajectory(g, c, start, nullptr, to, job_seed, &states);
      if (progress) progress->update(++done, std::to_string(states.size()) + " states");
    }
    if (progress) progress->finish(std::to_string(states.size()) + " states");
  }
  // Standardization from every rank's rows.
  {
    std::vector<double> acc(2 * WhatIf::kNumFeatures + 1, 0.0);
    for (const TeacherState& s : states) {
      const size_t rows = s.target.size();
      for (size_t r = 0; r < rows; ++r)
        for (int k = 0; k < WhatIf::kNumFeatures; ++k) {
          const double x = s.features[r * WhatIf::kNumFeatures + k];
          acc[k] += x;
          acc[WhatIf::kNumFeatures + k] += x * x;
        }
      acc.back() += static_cast<double>(rows);
    }
    comm.all_reduce(acc.data(), acc.size(), ReduceOp::kSum);
    if (!resumed) {
      const double n = std::max(1.0, acc.back());
      for (int k = 0; k < WhatIf::kNumFeatures; ++k) {
        const double m = acc[k] / n;
        const double var = std::max(0.0, acc[WhatIf::kNumFeatures + k] / n - m * m);
        scorer.feature_mean()[k] = static_cast<float>(m);
        scorer.feature_scale()[k] = var > 1e-12 ? static_cast<float>(1 / std::sqrt(var)) : 1.0f;
      }
    }
  }
  std::vector<double> counts = {static_cast<double>(states.size()),
                                static_cast<double>(simulations)};
  comm.all_reduce(counts.data(), counts.size(), ReduceOp::kSum);
  int64_t total_states = static_cast<int64_t>(counts[0]);
  if (!imitating) {  // resumed in the RL epochs: the count the labelling had
    const auto it = resumed->counters.find("states");
    if (it != resumed->counters.end()) total_states = it->second;
  }
  std::vector<double> gain_sum = {0.0};
  for (const TeacherState& s : states) gain_sum[0] += s.best_gain;
  comm.all_reduce(gain_sum.data(), 1, ReduceOp::kSum);
  const double mean_gain = std::max(1e-12, gain_sum[0] / std::max<int64_t>(1, total_states));
  if (total_states == 0 && imitating)
    throw InputError(options.config_path +
                     ": the teacher found no improving move on any start "
                     "(every start is a local optimum): nothing to imitate");
  if (imitating)
    spdlog::info("labelled {} states with {} simulations", total_states,
                 static_cast<int64_t>(counts[1]));
  const int64_t steps_per_epoch = std::max<int64_t>(
      1, comm.all_reduce_max((static_cast<int64_t>(states.size()) + cfg.batch_states - 1) /
                             cfg.batch_states));

  // Train.
  std::FILE* metrics = nullptr;
  if (rank == 0) {
    const std::string path = options.run_dir + "/metrics.csv";
    const std::string header =
        "epoch,loss,top1_improving,top1_best,lr,states,seconds,phase,rl_final_to_start,"
        "rl_improved";
    const bool fresh = !resumed || !file_exists(path);
    if (!fresh) {
      // A run from before the RL columns: give its rows the new columns, then append.
      const std::string old = read_file(path);
      if (old.compare(0, header.size(), header) != 0) {
        std::istringstream in(old);
        std::string line, out = header + "\n";
        std::getline(in, line);  // the old header
        while (std::getline(in, line))
          if (!line.empty()) out += line + ",imitate,,\n";
        write_file_atomic(path, out);
      }
    }
    metrics = std::fopen(path.c_str(), fresh ? "w" : "a");
    if (!metrics) throw SystemError(path + ": cannot open for writing");
    if (fresh) std::fprintf(metrics, "%s\n", header.c_str());
  }
  // Checkpoint of the epoch just done, on rank 0; then whether to stop (every rank).
  auto end_epoch = [&](int64_t epoch) {
    if (rank == 0) {
      CheckpointData data;
      data.step = epoch + 1;
      data.episodes = total_states;
      data.world_size = size;
      data.config_yaml = config_yaml;
      scorer.to_checkpoint(&data);
      const int64_t np = static_cast<int64_t>(scorer.num_params());
      data.optim_exp_avg["scorer"] = NamedArray::from_floats({np}, adam.exp_avg());
      data.optim_exp_avg_sq["scorer"] = NamedArray::from_floats({np}, adam.exp_avg_sq());
      data.optim_step = adam.step();
      data.counters["epoch"] = epoch + 1;
      data.counters["states"] = total_states;
      stamp_checkpoint(&data);
      store.publish(data);
    }
    // A stop signal, or the test hook PLACETO_TEST_EXIT_AT_ITERATION=RANK:EPOCH (every rank
    // stops, as after a preemption).
    const bool test_stop = options.test_exit_iteration == epoch + 1;
    if (comm.all_reduce_max(stop_signal_flag().load()) > 0 || test_stop) {
      spdlog::warn("stopping after epoch {} (signal); continue with --resume auto", epoch + 1);
      return true;
    }
    return false;
  };
  const int64_t all_epochs = static_cast<int64_t>(cfg.epochs) + cfg.rl_epochs;
  std::vector<float> grad(scorer.num_params());
  // One optimizer step, the same on every rank: `grad` summed over ranks, divided by the
  // items (states or starts) of the batch over all ranks, clipped.  Every rank calls it the
  // same number of times, even with an empty batch.
  auto step_with_mean_gradient = [&](double batch, double lr) {
    std::vector<double> n = {batch};
    comm.all_reduce(n.data(), 1, ReduceOp::kSum);
    comm.all_reduce(grad.data(), grad.size(), ReduceOp::kSum);
    if (n[0] == 0) return;
    for (float& x : grad) x = static_cast<float>(x / n[0]);
    clip_global_norm(grad.data(), grad.size(), cfg.clip_norm);
    adam.update(scorer.params().data(), grad.data(), lr);
  };
  std::vector<float> scores;
  std::vector<size_t> order(states.size());
  std::unique_ptr<ProgressLine> progress;
  if (rank == 0) {
    // Counts this process's epochs (a resumed run's rate and ETA are its own).
    progress = std::make_unique<ProgressLine>("train", all_epochs - first_epoch, "epochs");
  }
  for (int64_t epoch = first_epoch; epoch < cfg.epochs; ++epoch) {
    const double frac = cfg.epochs > 1 ? static_cast<double>(epoch) / (cfg.epochs - 1) : 1.0;
    const double lr = cfg.lr + (cfg.lr_end - cfg.lr) * frac;
    Rng rng(derive_seed(static_cast<uint64_t>(cfg.seed) + 7919u * static_cast<uint64_t>(rank),
                        static_cast<uint64_t>(epoch)));
    std::iota(order.begin(), order.end(), 0);
    for (size_t i = order.size(); i > 1; --i)
      std::swap(order[i - 1], order[static_cast<size_t>(rng.below(static_cast<int64_t>(i)))]);
    std::vector<double> stats(4, 0.0);  // loss sum, top-1 improving, top-1 best, states
    for (int64_t step = 0; step < steps_per_epoch; ++step) {
      std::fill(grad.begin(), grad.end(), 0.0f);
      double batch = 0;
      for (int b = 0; b < cfg.batch_states && !order.empty(); ++b) {
        const size_t at = static_cast<size_t>(step * cfg.batch_states + b);
        if (at >= order.size()) break;
        TeacherState& s = states[order[at]];
        const size_t rows = s.target.size();
        // States where the best move gains more weigh more: missing it costs more.
        const double weight = cfg.gain_weighting ? s.best_gain / mean_gain : 1.0;
        scores.resize(rows);
        stats[0] += scorer.listwise_loss(s.features.data(), rows, s.target.data(), grad.data(),
                                         weight, scores.data());
        const size_t top =
            static_cast<size_t>(std::max_element(scores.begin(), scores.end()) - scores.begin());
        const size_t best = static_cast<size_t>(std::max_element(s.target.begin(), s.target.end()) -
                                                s.target.begin());
        stats[1] += s.target[top] > 0 ? 1 : 0;
        stats[2] += top == best ? 1 : 0;
        stats[3] += 1;
        batch += 1;
      }
      step_with_mean_gradient(batch, lr);
    }
    comm.all_reduce(stats.data(), stats.size(), ReduceOp::kSum);
    const double seen = std::max(1.0, stats[3]);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t_begin).count();
    spdlog::info("epoch {}: loss {:.4f}, top-1 improving {:.3f}, top-1 best {:.3f}", epoch + 1,
                 stats[0] / seen, stats[1] / seen, stats[2] / seen);
    if (rank == 0) {
      std::fprintf(metrics, "%lld,%.6f,%.4f,%.4f,%.6g,%lld,%.1f,imitate,,\n",
                   static_cast<long long>(epoch + 1), stats[0] / seen, stats[1] / seen,
                   stats[2] / seen, lr, static_cast<long long>(total_states), seconds);
      std::fflush(metrics);
      progress->update(epoch + 1 - first_epoch,
                       "loss " + std::to_string(stats[0] / seen).substr(0, 6));
    }
    if (end_epoch(epoch)) {
      if (metrics) std::fclose(metrics);
      return kExitRequeue;
    }
  }

  // Reinforcement learning from the imitated scorer.
  if (cfg.rl_epochs > 0) {
    // This rank's starts, built once: (graph, cluster, start placement).
    struct RlJob {
      const Graph* graph;
      const Cluster* cluster;
      Placement start;
      size_t index;
    };
    std::map<std::pair<std::string, int>, Graph> graphs;
    std::vector<RlJob> mine;
    for (size_t k = static_cast<size_t>(rank); k < jobs.size(); k += static_cast<size_t>(size)) {
      const Job& j = jobs[k];
      auto it = graphs.find({j.family, j.graph});
      if (it == graphs.end())
        it = graphs.emplace(std::make_pair(j.family, j.graph), job_graph(cfg, j)).first;
      const Cluster& c = clusters[j.cluster];
      mine.push_back({&it->second, &c, job_start(cfg, j, k, it->second, c), k});
    }
    const int64_t rl_steps_per_epoch = std::max<int64_t>(
        1,
        comm.all_reduce_max((static_cast<int64_t>(mine.size()) + cfg.rl_batch - 1) / cfg.rl_batch));
    ReinforceOptions ro;
    ro.episodes = cfg.rl_episodes;
    ro.steps = cfg.rl_steps;
    ro.temperature = cfg.rl_temperature;
    for (int64_t epoch = std::max<int64_t>(first_epoch, cfg.epochs); epoch < all_epochs; ++epoch) {
      // The hand-over: a fresh optimizer (the imitation's moments would size the first steps).
      if (epoch == cfg.epochs) adam = Adam(scorer.num_params());
      std::vector<double> stats(4, 0.0);  // sum of final/start, improved fraction, starts, loss
      for (int64_t step = 0; step < rl_steps_per_epoch; ++step) {
        std::fill(grad.begin(), grad.end(), 0.0f);
        double batch = 0;
        for (int b = 0; b < cfg.rl_batch; ++b) {
          const size_t at = static_cast<size_t>(step * cfg.rl_batch + b);
          if (at >= mine.size()) break;
          const RlJob& j = mine[at];
          const uint64_t seed = derive_seed(
              derive_seed(static_cast<uint64_t>(cfg.seed) + 104729u, static_cast<uint64_t>(epoch)),
              j.index);
          const ReinforceStats rs =
              reinforce_moves(*j.graph, *j.cluster, j.start, scorer, ro, seed, grad.data());
          stats[0] += rs.mean_final_score / rs.start_score;
          stats[1] += rs.improved_fraction;
          stats[2] += 1;
          batch += 1;
        }
        step_with_mean_gradient(batch, cfg.rl_lr);
      }
      comm.all_reduce(stats.data(), stats.size(), ReduceOp::kSum);
      const double seen = std::max(1.0, stats[2]);
      const double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t_begin).count();
      spdlog::info("epoch {} (RL): best / start {:.4f}, improving proposals {:.3f}", epoch + 1,
                   stats[0] / seen, stats[1] / seen);
      if (rank == 0) {
        std::fprintf(metrics, "%lld,,,,%.6g,%lld,%.1f,rl,%.6f,%.4f\n",
                     static_cast<long long>(epoch + 1), cfg.rl_lr,
                     static_cast<long long>(total_states), seconds, stats[0] / seen,
                     stats[1] / seen);
        std::fflush(metrics);
        progress->update(epoch + 1 - first_epoch,
                         "best/start " + std::to_string(stats[0] / seen).substr(0, 6));
      }
      if (end_epoch(epoch)) {
        if (metrics) std::fclose(metrics);
        return kExitRequeue;
      }
    }
  }
  if (progress) progress->finish();
  if (metrics) std::fclose(metrics);
  if (rank == 0)
    std::printf(
        "learned-search scorer trained: %lld states, %d epochs + %d RL epochs; checkpoint "
        "%s/LATEST\n",
        static_cast<long long>(total_states), cfg.epochs, cfg.rl_epochs,
        (options.run_dir + "/checkpoints").c_str());
  return kExitDone;
}

}  // namespace placeto
