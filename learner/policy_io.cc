#include "learner/policy_io.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <memory>
#include <random>

#include "actors/rollout.h"
#include "common/checkpoint/checkpoint_store.h"
#include "common/error.h"
#include "learner/checkpointing.h"
#include "learner/param_vector.h"
#include "learner/trainer.h"

namespace placeto {

LoadedPolicy load_policy(const std::string& path) {
  namespace fs = std::filesystem;
  std::optional<CheckpointData> data;
  std::string file = path;
  std::error_code ec;
  if (fs::is_directory(path, ec) || fs::path(path).filename() == "LATEST") {
    std::string dir = fs::is_directory(path, ec) ? path : fs::path(path).parent_path().string();
    if (dir.empty()) dir = ".";
    CheckpointStore store(dir);
    data = store.load_latest(&file);
    if (!data) throw InputError(path + ": no checkpoint found");
  } else {
    data = read_checkpoint_file(path);
  }
  LoadedPolicy lp;
  lp.path = file;
  lp.config = parse_train_config(data->config_yaml, file + " (/meta config_yaml)", {});
  lp.net = PolicyNet(make_policy_config(lp.config));
  std::vector<float> params = params_from_checkpoint(*data, param_layout(lp.net), file);
  set_flat_params(lp.net, params);
  lp.net->eval();
  return lp;
}

PolicyPlacement place_with_policy(LoadedPolicy& policy, const Graph& g, const Cluster& cluster,
                                  int samples, uint64_t seed) {
  if (cluster.num_devices() != policy.config.devices)
    throw InputError(policy.path + ": the policy was trained for " +
                     std::to_string(policy.config.devices) + " devices, but the cluster has " +
                     std::to_string(cluster.num_devices()) +
                     " (train a policy for that count, or pass --devices " +
                     std::to_string(policy.config.devices) + ")");
  return place_with_net(policy.net, policy.config, g, cluster, samples, seed);
}

PolicyPlacement place_with_net(PolicyNet& net, const TrainConfig& config, const Graph& g,
                               const Cluster& cluster, int samples, uint64_t seed) {
  PLACETO_CHECK_EQ(cluster.num_devices(), config.devices);
  auto t0 = std::chrono::steady_clock::now();
  GraphTensors gt = make_graph_tensors(g, config.policy.message_passing == "sweep");
  EnvConfig env_cfg = config.env;
  PlacementEnv env(g, cluster, env_cfg);
  std::mt19937_64 rng(seed);
  PolicyPlacement best;
  bool best_ok = false;
  bool have = false;
  auto consider = [&](const EpisodeRecord& rec) {
    // Each episode's best placement seen, its start included: a policy never returns a
    // placement worse than the one it started from.
    const bool ok = rec.best_memory_ok;
    if (!have || (ok && !best_ok) || (ok == best_ok && rec.best_runtime_us < best.runtime_us)) {
      best.placement = rec.best_placement;
      best.runtime_us = rec.best_runtime_us;
      best_ok = ok;
      have = true;
    }
  };
  consider(run_episode(net, gt, env, rng, ActionMode::kGreedy, false));
  // Sampled episodes run in lockstep batches (one forward per step for the whole batch).
  constexpr int kBatch = 8;
  std::vector<std::unique_ptr<PlacementEnv>> envs;
  for (int done = 1; done < samples;) {
    const int b = std::min(kBatch, samples - done);
    while (static_cast<int>(envs.size()) < b)
      envs.push_back(std::make_unique<PlacementEnv>(g, cluster, env_cfg));
    std::vector<PlacementEnv*> batch;
    for (int i = 0; i < b; ++i) batch.push_back(envs[i].get());
    for (const EpisodeRecord& rec : run_episodes(net, gt, batch, rng, ActionMode::kSample, false))
      consider(rec);
    done += b;
  }
  best.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return best;
}

}  // namespace placeto
