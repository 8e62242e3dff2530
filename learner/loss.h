// The REINFORCE loss of one episode, computed for all its steps in one batched forward:
//   loss = mean over steps t of [ -log pi(a_t | s_t) * A_t  -  beta * H(pi(. | s_t)) ]
// with advantages A_t = G_t - b_t.  Averaging over steps keeps the gradient scale independent
// of graph size.
#pragma once

#include <torch/torch.h>

#include <vector>

#include "actors/policy.h"
#include "actors/rollout.h"

namespace placeto {

struct LossParts {
  torch::Tensor loss;  // scalar, differentiable
  double entropy = 0;  // mean policy entropy over the steps
  double pg_loss = 0;  // the policy-gradient part alone
};

// Steps [first, first + count) of the episode (count < 0: all), for chunked computation.
LossParts episode_loss(PolicyNet& policy, const GraphTensors& gt, const EpisodeRecord& rec,
                       const std::vector<double>& advantages, double entropy_beta, int first = 0,
                       int count = -1);

}  // namespace placeto
