// Converting the trainer's state to and from the HDF5 checkpoint format of common/checkpoint
// (docs/CHECKPOINT.md): /model and /optim hold the policy's parameters and Adam moments
// under their module paths, /baselines the per-graph return history, /counters the iteration
// and episode counts, /rng/rank_<r> each rank's engine state at the start of the next
// iteration.  No torch here: the parameter layout is passed in.
#pragma once

#include <string>
#include <vector>

#include "common/checkpoint/checkpoint_file.h"
#include "learner/trainer.h"

namespace placeto {

struct ParamLayout {
  std::vector<std::string> names;  // in flat-vector order
  std::vector<std::vector<int64_t>> shapes;
  size_t total() const;
};

CheckpointData trainer_state_to_checkpoint(const TrainerState& s, const ParamLayout& layout,
                                           const std::string& config_yaml, uint64_t seed);
// Throws InputError (naming `source`) when the checkpoint's parameters do not match `layout`.
TrainerState trainer_state_from_checkpoint(const CheckpointData& c, const ParamLayout& layout,
                                           int baseline_window, const std::string& source);
// Only the policy parameters (for placement and evaluation).
std::vector<float> params_from_checkpoint(const CheckpointData& c, const ParamLayout& layout,
                                          const std::string& source);

}  // namespace placeto
