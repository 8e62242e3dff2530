#include "actors/rollout.h"

#include <chrono>
#include <cmath>

namespace placeto {

std::vector<double> EpisodeRecord::returns() const {
  std::vector<double> g(rewards.size());
  double acc = 0;
  for (size_t i = rewards.size(); i-- > 0;) {
    acc += rewards[i];
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
  using clock = std::chrono::steady_clock;
  torch::NoGradGuard no_grad;
  EpisodeRecord rec;
  const int n = env.graph().num_nodes();
  const int d = env.num_devices();
  const int width = policy->feature_width();
  rec.num_nodes = n;
  rec.width = width;
  auto t0 = clock::now();
  env.reset(rng);
  rec.sim_seconds += std::chrono::duration<double>(clock::now() - t0).count();
  rec.start_runtime_us = env.current_runtime_us();
  if (keep_features) rec.features.resize(static_cast<size_t>(n) * n * width);
  torch::Tensor x = torch::empty({1, n, width});
  torch::Tensor cur = torch::empty({1}, torch::kInt64);
  while (!env.done()) {
    const int t = env.step_index();
    auto tp = clock::now();
    build_features(env, policy->config().features, x.data_ptr<float>());
    const NodeId v = env.current_node();
    cur.data_ptr<int64_t>()[0] = v;
    torch::Tensor logits = policy->forward(x, cur, gt).contiguous();
    const float* lp = logits.data_ptr<float>();
    int action;
    if (mode == ActionMode::kGreedy) {
      action = 0;
      for (int i = 1; i < d; ++i)
        if (lp[i] > lp[action]) action = i;
    } else {
      action = sample_from_logits(lp, d, rng);
    }
    if (keep_features)
      std::copy(x.data_ptr<float>(), x.data_ptr<float>() + static_cast<size_t>(n) * width,
                rec.features.begin() + static_cast<size_t>(t) * n * width);
    auto ts = clock::now();
    rec.policy_seconds += std::chrono::duration<double>(ts - tp).count();
    double r = env.step(action);
    rec.sim_seconds += std::chrono::duration<double>(clock::now() - ts).count();
    rec.current.push_back(v);
    rec.actions.push_back(action);
    rec.rewards.push_back(r);
  }
  rec.final_runtime_us = env.current_runtime_us();
  rec.final_objective_us = env.objective_us();
  rec.final_placement = env.placement();
  return rec;
}

}  // namespace placeto
