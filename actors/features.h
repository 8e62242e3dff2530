// Node features of the Placeto state, one row per node, each column divided by its maximum
// absolute value over the graph (so signed columns stay in [-1, 1] and an all-zero column
// stays zero).  Columns: cost, output bytes, visited count, is-current flag, start time minus
// the current node's start time (signed), [output bytes live at the start if with_memory],
// then a one-hot of the node's current device.  Width 5 + D (6 + D with memory).
//
// With lookahead, lookahead_width_per_device() more columns per device follow; they are filled only
// in the current node's row (zero elsewhere) from PlacementEnv::what_if_devices, i.e. what the
// simulator says each choice of this step would give.  Per device d, with R the current
// objective, B the best of the episode so far and R_d the objective after the move:
// 10 (R_d - R) / R, 10 (R_d - B) / R, (R_d - R) / max_j |R_j - R| (0 when no move changes
// anything), 1 if R_d is the lowest of the R_j, 1 if d is the op's device now.  With
// memory_features (policy.memory_features) two more per device (WhatIfMemory of
// actors/environment.h): device d's headroom after the move, (cap_d - need_d) / cap_d in
// [-1, 1] (1 without a capacity), and the change of the total relative overflow, sum over
// devices of max(0, need - cap) / cap, that the move makes, in [-1, 1] (0 without
// capacities).  No torch.
#pragma once

#include <vector>

#include "actors/environment.h"

namespace placeto {

struct FeatureConfig {
  bool with_memory = false;
  bool lookahead = false;
  bool memory_features = false;  // REQUIRES lookahead
  // Any device count (policy.any_devices; REQUIRES lookahead): the node columns end with one
  // flag, "on the current step's device", instead of the one-hot of the node's device, so their
  // width does not depend on D; and each device's columns in the current row get
  // kDevicePerDevice more, which describe the device rather than name it (below).
  bool any_devices = false;
};

inline constexpr int kLookaheadPerDevice = 5;
inline constexpr int kMemoryLookaheadPerDevice = 2;
// any_devices, per device d: the share of the current step's tensors (the bytes on its edges
// to ops outside it, + 1 per edge) whose other end is on d; the share of the graph's compute
// placed on d; d's speed for the current op, relative to the fastest device (1 on a
// homogeneous cluster); d's headroom now, (cap - need) / cap in [-1, 1] (1 without a capacity).
inline constexpr int kDevicePerDevice = 4;

// Columns per device in the current row: kLookaheadPerDevice, plus kMemoryLookaheadPerDevice
// with memory_features, plus kDevicePerDevice with any_devices; 0 without lookahead.
int lookahead_width_per_device(const FeatureConfig& c);

// Width of the per-node columns that every row has (the lookahead columns excluded); with
// any_devices it does not depend on num_devices.
int node_feature_width(const FeatureConfig& c, int num_devices);

int feature_width(const FeatureConfig& c, int num_devices);

// Writes the features of `env`'s current state (lookahead: runs D - 1 what-if simulations) into
// out[num_nodes * width] (row-major).
void build_features(const PlacementEnv& env, const FeatureConfig& c, float* out);

}  // namespace placeto
