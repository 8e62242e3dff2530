// Node features of the Placeto state, one row per node, each column divided by its maximum
// absolute value over the graph (so signed columns stay in [-1, 1] and an all-zero column
// stays zero).  Columns: cost, output bytes, visited count, is-current flag, start time minus
// the current node's start time (signed), [output bytes live at the start if with_memory],
// then a one-hot of the node's current device.  Width 5 + D (6 + D with memory).  No torch.
#pragma once

#include <vector>

#include "actors/environment.h"

namespace placeto {

struct FeatureConfig {
  bool with_memory = false;
};

int feature_width(const FeatureConfig& c, int num_devices);

// Writes the features of `env`'s current state into out[num_nodes * width] (row-major).
void build_features(const PlacementEnv& env, const FeatureConfig& c, float* out);

}  // namespace placeto
