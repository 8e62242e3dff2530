// The learned search in the placer registry (sim/placers/registry.h):
//  * "policy-search": learned_search (improve/learned_search.h) from the best fast placement
//    (or --start), scored by a learned-search checkpoint, for --time-ms or --budget;
//  * "auto": the fast placers, then the learned search (with --checkpoint) or steepest
//    descent (without) for the rest of --time-ms (default 100): never worse than the best
//    fast placer;
//  * "scorer-greedy": the greedy learned improvement from the best fast placement (or
//    --start): only improving moves, in the scorer's order.
// All three are torch-free; "policy" is the Placeto network alone (learner/policy_io.h).
#pragma once

#include <memory>
#include <string>

#include "improve/move_scorer.h"
#include "sim/placers/placer.h"

namespace placeto {

struct LoadedScorer {
  std::string path;  // the file actually read
  MoveScorer scorer;
  std::string config_yaml;  // how it was trained
};

// `path`: a checkpoint file, a run's checkpoint directory or its LATEST.  Throws InputError
// naming the file when it is not a learned-search checkpoint.
LoadedScorer load_scorer(const std::string& path);

// Adds "scorer-greedy", "policy-search" and "auto".  Idempotent.
void register_learned_search_placers();

}  // namespace placeto
