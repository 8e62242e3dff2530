// The learned search in the placer registry (sim/placers/registry.h).  Without --checkpoint
// all three use the default model (default_model_path(): models/default.h5, trained on a broad
// mix, docs/LEARNED_SEARCH.md); `auto --checkpoint none` runs without a model.
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

#include "improve/learned_search.h"
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

// The default move scorer: $PLACETO_DEFAULT_MODEL when set, else models/default.h5 of the
// source tree this binary was built from.  The file need not exist (load_scorer says so).
std::string default_model_path();

// The checkpoint a learned-search method uses: `checkpoint`, or the default model when it is
// empty.  "none" (auto only) is returned as is.
std::string scorer_checkpoint_or_default(const std::string& checkpoint);

// Applies --search-set settings ("group_share=0.2", "segment_share=...", "swap_share=...",
// each in [0, 1], their sum at most 1) to `o`.  InputError names the setting.
// `descent_share` (auto's first descent, a share of the time left): accepted only when given.
void apply_search_settings(const std::vector<std::string>& settings, LearnedSearchOptions* o,
                           double* descent_share = nullptr);

// Adds "scorer-greedy", "policy-search" and "auto".  Idempotent.
void register_learned_search_placers();

}  // namespace placeto
