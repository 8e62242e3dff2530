// Reinforcement learning of the move scorer with the incumbent reward, after its imitation of
// the best-move teacher (improve/scorer_training.h).
#pragma once

#include <cstdint>

#include "improve/move_scorer.h"
#include "sim/cluster.h"
#include "sim/graph.h"

namespace placeto {

// Fine-tuning the scorer by reinforcement learning with the incumbent reward (after the
// imitation; issue #20).  From `start`, `episodes` episodes of `steps` proposals each: a
// proposal is a move drawn from softmax(logits / temperature) over every move of the current
// state (the search's proposal distribution without its uniform share); it is kept when it
// improves the state and undone otherwise (the greedy walk's rule), so the state is always
// the best placement seen and each step's reward is the incumbent reward
// max(0, best_{t-1} - R_t) / R_0.  The returns are undiscounted; the baseline at step t is the
// mean return of the other episodes at t (leave-one-out: same start, same policy).
struct ReinforceOptions {
  int episodes = 8;  // >= 2
  int steps = 32;
  double temperature = 0.25;
};

struct ReinforceStats {
  double start_score = 0;
  double mean_final_score = 0;   // mean over episodes of the best score reached
  double improved_fraction = 0;  // proposals that improved
  int64_t simulations = 0;
  int64_t proposals = 0;
};

// Adds d(loss)/d(params) of the episodes, loss = -sum_e,t A_e,t log pi(a_e,t | s_e,t) /
// (episodes x steps), to grad[0 .. scorer.num_params()).  Deterministic in `seed`.
ReinforceStats reinforce_moves(const Graph& g, const Cluster& c, const Placement& start,
                               MoveScorer& scorer, const ReinforceOptions& options, uint64_t seed,
                               float* grad);

}  // namespace placeto
