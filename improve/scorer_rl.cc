#include "improve/scorer_rl.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "common/error.h"
#include "common/rng.h"
#include "improve/what_if.h"
#include "sim/placers/search_util.h"
#include "sim/simulator.h"
#include "training/advantages.h"

namespace placeto {

ReinforceStats reinforce_moves(const Graph& g, const Cluster& c, const Placement& start,
                               MoveScorer& scorer, const ReinforceOptions& o, uint64_t seed,
                               float* grad) {
  PLACETO_CHECK(o.episodes >= 2 && o.steps >= 1 && o.temperature > 0);
  ReinforceStats st;
  Simulator sim(g, c);
  st.start_score = search_score(sim.simulate(start), c);
  ++st.simulations;
  if (c.num_devices() < 2 || g.num_nodes() == 0) {
    st.mean_final_score = st.start_score;
    return st;
  }
  WhatIf what_if(g, c);
  Rng rng(seed);
  const size_t np = scorer.num_params();
  const size_t total_steps = static_cast<size_t>(o.episodes) * o.steps;
  // Per step: the gradient of -log pi(a | s), weighted by the advantage once returns are known.
  std::vector<float> step_grads(total_steps * np, 0.0f);
  std::vector<double> rewards(total_steps, 0.0);
  std::vector<float> features, logits, target;
  std::vector<Move> moves;
  std::vector<double> cdf;
  int64_t improved = 0;
  double final_sum = 0;
  for (int e = 0; e < o.episodes; ++e) {
    Placement current = start;
    double current_score = search_score(sim.simulate(current), c);
    ++st.simulations;
    bool stale = true;  // the features describe another state than `current`
    for (int t = 0; t < o.steps; ++t) {
      if (stale) {
        // The simulator's latest call was `current` (the episode's start, or the move just
        // kept): its schedule is the one the features read.
        what_if.compute(sim, current, &features, &moves);
        logits.resize(moves.size());
        scorer.score(features.data(), moves.size(), logits.data(), WhatIf::kNumFeatures);
        // Inverse-CDF sampling of softmax(logits / temperature).
        double zmax = -std::numeric_limits<double>::infinity();
        for (float z : logits) zmax = std::max(zmax, z / o.temperature);
        cdf.resize(moves.size());
        double acc = 0;
        for (size_t i = 0; i < moves.size(); ++i) {
          acc += std::exp(logits[i] / o.temperature - zmax);
          cdf[i] = acc;
        }
        stale = false;
      }
      const double u = rng.uniform01() * cdf.back();
      const size_t a =
          std::min(moves.size() - 1,
                   static_cast<size_t>(std::upper_bound(cdf.begin(), cdf.end(), u) - cdf.begin()));
      const size_t k = static_cast<size_t>(e) * o.steps + t;
      target.assign(moves.size(), 0.0f);
      target[a] = 1.0f;
      scorer.listwise_loss(features.data(), moves.size(), target.data(), step_grads.data() + k * np,
                           1.0, nullptr, o.temperature, WhatIf::kNumFeatures);
      const int32_t old = current.device[moves[a].op];
      current.device[moves[a].op] = moves[a].device;
      const double s = search_score(sim.simulate(current), c);
      ++st.simulations;
      ++st.proposals;
      if (score_improves(s, current_score)) {
        rewards[k] = (current_score - s) / st.start_score;
        current_score = s;
        stale = true;
        ++improved;
      } else {
        current.device[moves[a].op] = old;
      }
    }
    final_sum += current_score;
  }
  // Returns per episode and step, their leave-one-out advantages (training/advantages.h), and
  // the weighted sum of the step gradients.
  Returns ret(o.episodes, std::vector<double>(o.steps));
  for (int e = 0; e < o.episodes; ++e) {
    double acc = 0;
    for (int t = o.steps; t-- > 0;) {
      acc += rewards[static_cast<size_t>(e) * o.steps + t];
      ret[e][t] = acc;
    }
  }
  const Returns adv = leave_one_out_advantages(ret);
  for (int t = 0; t < o.steps; ++t)  // this order of the float sums: checkpoints stay bit-exact
    for (int e = 0; e < o.episodes; ++e) {
      const double a = adv[e][t] / static_cast<double>(total_steps);
      if (a == 0) continue;
      const float* gk = step_grads.data() + (static_cast<size_t>(e) * o.steps + t) * np;
      for (size_t i = 0; i < np; ++i) grad[i] += static_cast<float>(a * gk[i]);
    }
  st.mean_final_score = final_sum / o.episodes;
  st.improved_fraction =
      st.proposals > 0 ? static_cast<double>(improved) / static_cast<double>(st.proposals) : 0;
  return st;
}

}  // namespace placeto
