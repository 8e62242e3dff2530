#include "actors/policy_placer.h"

#include <algorithm>
#include <chrono>
#include <random>
#include <vector>

#include "actors/rollout.h"
#include "common/error.h"
#include "sim/placers/registry.h"

namespace placeto {

PolicyPlacement place_with_network(PolicyNet& net, const EnvConfig& env_cfg, bool sweep,
                                   const Graph& g, const Cluster& cluster, int samples,
                                   uint64_t seed) {
  auto t0 = std::chrono::steady_clock::now();
  GraphTensors gt = make_graph_tensors(g, sweep);
  PlacementEnv env(g, cluster, env_cfg);
  std::mt19937_64 rng(seed);
  PolicyPlacement best;
  bool best_ok = false;
  double best_score = 0;
  bool have = false;
  auto consider = [&](const EpisodeRecord& rec) {
    // Each episode's best placement seen, its start included: a policy never returns a
    // placement worse than the one it started from.  With capacities the memory rule's score
    // decides (sim/placers/memory_rule.h), else feasibility, then the runtime.
    const bool ok = rec.best_memory_ok;
    const bool better =
        env.memory_rule()
            ? rec.best_score < best_score
            : (ok && !best_ok) || (ok == best_ok && rec.best_runtime_us < best.runtime_us);
    if (!have || better) {
      best.placement = rec.best_placement;
      best.runtime_us = rec.best_runtime_us;
      best_ok = ok;
      best_score = rec.best_score;
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

namespace {

class PolicyPlacer : public Placer {
 public:
  explicit PolicyPlacer(LearnedPlacerSetup s) : s_(std::move(s)) {}
  std::string name() const override { return "policy"; }
  Placement place(const Graph& g, const Cluster& c, const PlacerOptions& o) const override {
    return place_policy(g, c, o).placement;
  }

 protected:
  PolicyPlacement place_policy(const Graph& g, const Cluster& c, const PlacerOptions& o) const {
    if (c.num_devices() != s_.devices)
      throw InputError(s_.source + ": the policy was trained for " + std::to_string(s_.devices) +
                       " devices, but the cluster has " + std::to_string(c.num_devices()) +
                       " (train a policy for that count, or pass --devices " +
                       std::to_string(s_.devices) + ")");
    PolicyNet net = s_.net;  // shares the module
    return place_with_network(net, s_.env, s_.sweep, g, c, std::max(1, o.samples),
                              static_cast<uint64_t>(o.seed));
  }

  LearnedPlacerSetup s_;
};

class PolicyAnnealPlacer : public PolicyPlacer {
 public:
  using PolicyPlacer::PolicyPlacer;
  std::string name() const override { return "policy+anneal"; }
  Placement place(const Graph& g, const Cluster& c, const PlacerOptions& o) const override {
    const auto t0 = std::chrono::steady_clock::now();
    PlacerOptions ao;
    ao.seed = o.seed;
    ao.budget = o.budget;
    ao.stats = o.stats;
    ao.initial = place_policy(g, c, o).placement;
    if (o.time_ms > 0) {
      const double spent =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      ao.time_ms = std::max(1e-3, o.time_ms - spent);
      ao.budget = 0;
    }
    return make_placer("anneal")->place(g, c, ao);
  }
};

}  // namespace

std::unique_ptr<Placer> make_policy_placer(LearnedPlacerSetup setup) {
  return std::make_unique<PolicyPlacer>(std::move(setup));
}

std::unique_ptr<Placer> make_policy_anneal_placer(LearnedPlacerSetup setup) {
  return std::make_unique<PolicyAnnealPlacer>(std::move(setup));
}

}  // namespace placeto
