// Improving a placement one move at a time, with the moves proposed by a scorer
// (improve/move_scorer.h) -- the learned local search of issue #20 -- and the best-move
// teacher that the scorer imitates.
//
// One state is a full placement.  Its schedule gives the what-if features of every
// (op, device) move, the scorer ranks them in one forward pass, and candidates are simulated
// in rank order: the first one accepted becomes the new state (its simulation already is the
// new schedule, so features are refreshed without another simulation).  The result is the best
// placement seen, the start included, so it is never worse than the start.
//
//  * greedy (`placeto place --method policy` with a learned-search checkpoint): candidates in
//    score order, only improving moves accepted; the walk stops after `greedy_tries`
//    failures in a row, or when the budget runs out.
//  * search (`--method policy-search`): candidates in an order sampled from the scores
//    (Gumbel top-k on logits / sample_temperature, mixed with uniform draws, share
//    `epsilon`), each accepted by the Metropolis rule at a temperature that falls
//    geometrically over the budget or time.
// The ranking is recomputed every `refresh_every` accepted moves (docs/LEARNED_SEARCH.md).
// Both modes are proposers on the Metropolis engine of sim/placers/metropolis.h (the one
// anneal uses): a proposal is the best of a batch of simulated candidates, with its score;
// greedy runs at zero temperature and proposes only strictly improving moves.
#pragma once

#include <cstdint>
#include <vector>

#include "improve/move_scorer.h"
#include "improve/what_if.h"
#include "sim/cluster.h"
#include "sim/graph.h"

namespace placeto {

struct LearnedSearchOptions {
  bool greedy = false;
  // Stop after this many simulations (0: 2000 for search, 20 N for greedy) or, when time_ms > 0,
  // after this much wall time since the call began; the temperature then falls with the time spent.
  int64_t budget = 0;
  double time_ms = 0;
  int greedy_tries = 64;
  // Accepted moves between two rankings: the features and scores are recomputed after this
  // many (1: after every move); in between the walk continues down the previous ranking.
  int refresh_every = 4;
  // Candidates simulated per proposal: the best of them is the move proposed (1: each
  // candidate is a proposal of its own).
  int batch = 1;
  double epsilon = 0.1;
  // search: the candidate order is a sample of softmax(logits / sample_temperature) without
  // replacement (lower: closer to the scorer's own order).
  double sample_temperature = 0.25;
  // Metropolis temperatures as fractions of the start's score; the first is divided by the
  // device count (0.01 at 2 devices, 0.005 at 4): with fewer devices an op has fewer
  // alternatives, and the walk needs more heat to leave a basin (docs/LEARNED_SEARCH.md).
  double t_start_times_devices = 0.02, t_end = 2e-5;
  uint64_t seed = 1;
  // Moves beyond one op (issue #35 item 3).  Each candidate drawn down the ranking is a move
  // (v, d) of one op; with these probabilities it is widened, and simulated as one candidate:
  //  * group: v with its training group (training_op_groups: its /grad and /update ops, or
  //    its forward op and their siblings when v is one of them) to d;
  //  * segment: a contiguous segment of v's forward chain (forward_chains: 1 to its length
  //    groups, ending or starting at v's) to d;
  //  * swap: v to d and, back to v's device, the op on d whose move there the current ranking
  //    puts first (the scorer ranks both halves).
  // Zero (the default): single-op moves only.
  double group_share = 0, segment_share = 0, swap_share = 0;
};

struct LearnedSearchStats {
  int64_t simulations = 0;
  int64_t accepted = 0;
  int64_t refreshes = 0;  // feature + scorer passes
  double start_score = 0, best_score = 0;
};

// REQUIRES: start is a valid placement for g on c.  scorer == nullptr ranks moves at random
// (the same search without the network: the ablation).
Placement learned_search(const Graph& g, const Cluster& c, const Placement& start,
                         MoveScorer* scorer, const LearnedSearchOptions& options,
                         LearnedSearchStats* stats = nullptr);

}  // namespace placeto
