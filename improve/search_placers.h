// The learned search in the placer registry (sim/placers/registry.h):
//  * "policy-search": learned_search (improve/learned_search.h) from the best fast placement
//    (or --start), scored by a learned-search checkpoint, for --time-ms or --budget;
//  * "auto": the fast placers, then the learned search (with --checkpoint) or steepest
//    descent (without) for the rest of --time-ms (default 100): never worse than the best
//    fast placer;
//  * "policy" with a learned-search checkpoint runs the greedy learned improvement
//    (learner/policy_io.cc asks is_learned_search_checkpoint and calls
//    make_learned_improvement_placer).
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
// Whether `path` resolves to a learned-search checkpoint (false when it cannot be read: the
// caller's own loader then reports why).
bool is_learned_search_checkpoint(const std::string& path);

// The greedy learned improvement from the best fast placement (or options.initial).
std::unique_ptr<Placer> make_learned_improvement_placer(const std::string& checkpoint);

// Adds "policy-search" and "auto".  Idempotent; call it where register_policy_placers is.
void register_learned_search_placers();

}  // namespace placeto
