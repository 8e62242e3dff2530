// The policy-gradient losses of one episode, computed for all its steps in one batched
// forward.
//  * REINFORCE: loss = mean over steps t of [ -log pi(a_t | s_t) * A_t  -  beta * H(pi(. | s_t)) ]
//    with advantages A_t = G_t - b_t.  Averaging over steps keeps the gradient scale
//    independent of graph size.
//  * PPO: mean over steps of [ -min(rho_t A_t, clip(rho_t, 1 - c, 1 + c) A_t)
//    + value_coef (V(s_t) - target_t)^2 - beta H_t ], rho_t = pi(a_t | s_t) / pi_old(a_t | s_t).
//    At rho = 1 its policy part has REINFORCE's gradient.
// Both can add kl_coef * KL(pi_ref(. | s_t) || pi(. | s_t)) per step, pi_ref being a frozen
// policy (the warm start after imitation).
#pragma once

#include <torch/torch.h>

#include <vector>

#include "actors/policy.h"
#include "actors/rollout.h"

namespace placeto {

struct LossParts {
  torch::Tensor loss;                        // scalar, differentiable
  double entropy = 0;                        // mean policy entropy over the steps
  double pg_loss = 0;                        // the policy-gradient part alone
  double kl = 0;                             // mean KL to the reference policy (0 without one)
  double value_loss = 0, clip_fraction = 0;  // PPO only
};

// A frozen reference policy's log-distributions over the steps of an episode ([T, D], no
// gradient), and the weight of the KL term to it.
struct KlTerm {
  const torch::Tensor* ref_log_dist = nullptr;
  double coef = 0;
};

// Steps [first, first + count) of the episode (count < 0: all), for chunked computation.
LossParts episode_loss(PolicyNet& policy, const GraphTensors& gt, const EpisodeRecord& rec,
                       const std::vector<double>& advantages, double entropy_beta, int first = 0,
                       int count = -1, const KlTerm& kl = KlTerm());

// The episode under the current parameters, without gradients: log pi(a_t | s_t) of the
// recorded actions, the log-distributions [T, D], and V(s_t) when the policy has a value head
// (empty otherwise).
struct EpisodeEval {
  std::vector<double> logp;
  torch::Tensor log_dist;
  std::vector<double> values;
};
EpisodeEval evaluate_episode(PolicyNet& policy, const GraphTensors& gt, const EpisodeRecord& rec);

struct PpoTerms {
  double clip = 0.2;
  double value_coef = 0.5;
  double entropy_beta = 0;
};

// REQUIRES: the policy has a value head; old_logp and value_targets have one entry per step.
LossParts ppo_episode_loss(PolicyNet& policy, const GraphTensors& gt, const EpisodeRecord& rec,
                           const std::vector<double>& advantages,
                           const std::vector<double>& value_targets,
                           const std::vector<double>& old_logp, const PpoTerms& terms,
                           const KlTerm& kl = KlTerm());

}  // namespace placeto
