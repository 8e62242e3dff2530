// Advantages of a batch of episodes, and the statistics that tell whether a run learns.  No
// torch.
//
// The batch is the lockstep episodes of one iteration on one rank: same graph, same start,
// same policy, so their returns at step t are i.i.d. samples and the mean of the *other*
// episodes' returns (leave-one-out) is an unbiased baseline that costs nothing (the moving
// window of BaselineStore is many updates old by the time a graph comes back).
#pragma once

#include <vector>

namespace placeto {

using Returns = std::vector<std::vector<double>>;  // [episode][step]

// A_e,t = G_e,t - mean over e' != e of G_e',t.  Needs at least two episodes of equal length
// (PLACETO_CHECK).
Returns leave_one_out_advantages(const Returns& returns);

// Generalized advantage estimation: with delta_t = r_t + gamma V_{t+1} - V_t (V_T = 0),
// A_t = sum_k (gamma lambda)^k delta_{t+k}.  lambda = 1 gives G_t - V_t, lambda = 0 the
// one-step delta.  `value_targets`, when given, receives A_t + V_t (what the value head is
// fitted to).  rewards[e] and values[e] have the same length.
Returns gae_advantages(const Returns& rewards, const Returns& values, double gamma, double lambda,
                       Returns* value_targets = nullptr);

struct MeanSd {
  double mean = 0, sd = 0;
};

// Mean and (population) standard deviation over every step of every episode.
MeanSd advantage_stats(const Returns& advantages);

// Subtracts the mean and divides by the standard deviation (left unscaled below 1e-12), so the
// entropy bonus weighs the same against the policy gradient whatever the reward scale.
void normalize_advantages(Returns* advantages);

// Cosine of the angle between two gradients: the signal-to-noise of a batch when a and b are
// the gradients of its two halves (near 0: the halves disagree, the update is mostly noise).
// 0 when either is zero.
double cosine_similarity(const std::vector<float>& a, const std::vector<float>& b);

}  // namespace placeto
