#include "actors/rollout.h"

#include <chrono>
#include <cmath>

#include "common/error.h"

namespace placeto {

std::vector<double> EpisodeRecord::returns(double discount) const {
  std::vector<double> g(rewards.size());
  double acc = 0;
  for (size_t i = rewards.size(); i-- > 0;) {
    acc = rewards[i] + discount * acc;
    g[i] = acc;
  }
  return g;
}

int sample_from_logits(const float* logits, int n, std::mt19937_64& rng) {
  double mx = logits[0];
  for (int i = 1; i < n; ++i) mx = std::max(mx, static_cast<double>(logits[i]));
  double total = 0;
  double p[1024];
  for (int i = 0; i < n; ++i) {
    p[i] = std::exp(static_cast<double>(logits[i]) - mx);
    total += p[i];
  }
  // 53 random bits -> [0, 1).
  double u = static_cast<double>(rng() >> 11) * (1.0 / 9007199254740992.0) * total;
  for (int i = 0; i < n; ++i) {
    u -= p[i];
    if (u < 0) return i;
  }
  return n - 1;
}

EpisodeRecord run_episode(PolicyNet& policy, const GraphTensors& gt, PlacementEnv& env,
                          std::mt19937_64& rng, ActionMode mode, bool keep_features) {
  return std::move(run_episodes(policy, gt, {&env}, rng, mode, keep_features).front());
}

std::vector<EpisodeRecord> run_episodes(PolicyNet& policy, const GraphTensors& gt,
                                        const std::vector<PlacementEnv*>& envs,
                                        std::mt19937_64& rng, ActionMode mode, bool keep_features,
                                        const std::vector<int32_t>* forced) {
  using clock = std::chrono::steady_clock;
  PLACETO_CHECK(!envs.empty());
  PLACETO_CHECK((mode == ActionMode::kForced) == (forced != nullptr));
  PLACETO_CHECK(!forced || forced->size() == static_cast<size_t>(envs[0]->graph().num_nodes()));
  torch::InferenceMode inference;
  const int k = static_cast<int>(envs.size());
  const int n = envs[0]->graph().num_nodes();
  const int d = envs[0]->num_devices();
  PLACETO_CHECK(policy->places(d));
  const int width = policy->feature_width(d);
  const size_t plane = static_cast<size_t>(n) * width;
  std::vector<EpisodeRecord> recs(k);
  double sim_s = 0, policy_s = 0;
  for (int e = 0; e < k; ++e) {
    PLACETO_CHECK_EQ(envs[e]->graph().num_nodes(), n);
    EpisodeRecord& rec = recs[e];
    rec.num_nodes = n;
    rec.width = width;
    auto t0 = clock::now();
    envs[e]->reset(rng);
    sim_s += std::chrono::duration<double>(clock::now() - t0).count();
    rec.start_runtime_us = envs[e]->current_runtime_us();
    // One step per op, or per group of ops (env.action: op_group).
    const size_t steps = envs[e]->order().size();
    PLACETO_CHECK_EQ(steps, envs[0]->order().size());
    if (keep_features) rec.features.resize(steps * plane);
    rec.current.reserve(steps);
    rec.actions.reserve(steps);
    rec.rewards.reserve(steps);
  }
  torch::Tensor x = torch::empty({k, n, width});
  torch::Tensor cur = torch::empty({k}, torch::kInt64);
  float* xp = x.data_ptr<float>();
  int64_t* cp = cur.data_ptr<int64_t>();
  while (!envs[0]->done()) {
    const int t = envs[0]->step_index();
    auto tp = clock::now();
    for (int e = 0; e < k; ++e) {
      PLACETO_CHECK(!envs[e]->done());
      build_features(*envs[e], policy->config().features, xp + e * plane);
      cp[e] = envs[e]->current_node();
    }
    torch::Tensor logits = policy->forward(x, cur, gt).contiguous();
    const float* lp = logits.data_ptr<float>();
    std::vector<int> actions(k);
    for (int e = 0; e < k; ++e) {
      const float* row = lp + static_cast<size_t>(e) * d;
      if (mode == ActionMode::kForced) {
        actions[e] = (*forced)[cp[e]];
        PLACETO_CHECK(actions[e] >= 0 && actions[e] < d);
      } else if (mode == ActionMode::kGreedy) {
        int a = 0;
        for (int i = 1; i < d; ++i)
          if (row[i] > row[a]) a = i;
        actions[e] = a;
      } else {
        actions[e] = sample_from_logits(row, d, rng);
      }
      if (keep_features)
        std::copy(xp + e * plane, xp + (e + 1) * plane,
                  recs[e].features.begin() + static_cast<size_t>(t) * plane);
    }
    auto ts = clock::now();
    policy_s += std::chrono::duration<double>(ts - tp).count();
    for (int e = 0; e < k; ++e) {
      recs[e].moves += envs[e]->placement().device[cp[e]] != actions[e];
      const double r = envs[e]->step(actions[e]);
      recs[e].current.push_back(cp[e]);
      recs[e].actions.push_back(actions[e]);
      recs[e].rewards.push_back(r);
    }
    sim_s += std::chrono::duration<double>(clock::now() - ts).count();
  }
  for (int e = 0; e < k; ++e) {
    EpisodeRecord& rec = recs[e];
    rec.final_runtime_us = envs[e]->current_runtime_us();
    rec.final_objective_us = envs[e]->objective_us();
    rec.final_memory_ok = envs[e]->last_sim().memory_ok;
    rec.final_placement = envs[e]->placement();
    rec.best_placement = envs[e]->best_placement();
    rec.best_runtime_us = envs[e]->best_runtime_us();
    rec.best_objective_us = envs[e]->best_objective_us();
    rec.best_score = envs[e]->best_score();
    rec.best_memory_ok = envs[e]->best_memory_ok();
    rec.sim_seconds = sim_s / k;  // the episodes shared the time; split it evenly
    rec.policy_seconds = policy_s / k;
  }
  return recs;
}

}  // namespace placeto
