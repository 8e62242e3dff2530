// What-if features of single-op moves: for a placement and the simulator's schedule of it, one
// feature row per (op, target device) pair, describing what moving that op to that device
// would change -- how much earlier or later it could start there, the transfers the move adds
// and removes, the op's slack and criticality, the target's load, speed and free memory.
// They are the learned search's inputs (improve/move_scorer.h).  Every feature is a ratio to
// the makespan, a fraction or a flag, so one scorer applies to any graph size, any device
// count and any cluster.  No simulation happens here: the caller simulates the placement.
//
// Memory (issue #33): columns 16-17 (free memory there counting the op's parameters only, and
// a flag for an overflowing current device) saw neither the op's activations nor what the
// move does to the overflow.  Columns 27-30, appended so that older scorers read their first
// 27, add each side's headroom, the move's estimated change of the total relative overflow
// and the op's size against the target's capacity.  A move's bytes are estimated as the op's
// parameters plus all its outputs (op_footprint_bytes), an upper bound on what it adds to the
// target's simulated peak and takes from its own device's.
//
// Pair order: op-major, the targets of op v in ascending device order with v's own device
// left out, so a placement on D devices has N (D - 1) pairs.  Not thread-safe; one per thread.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/cluster.h"
#include "sim/graph.h"
#include "sim/simulator.h"

namespace placeto {

struct Move {
  NodeId op = -1;
  int32_t device = -1;
};

class WhatIf {
 public:
  static constexpr int kNumFeatures = 31;
  // The feature names, in column order (checkpoints record them).
  static const char* const kFeatureNames[kNumFeatures];

  // Keeps references: graph and cluster must outlive it.
  WhatIf(const Graph& graph, const Cluster& cluster);
  WhatIf(Graph&&, const Cluster&) = delete;

  // REQUIRES: sim.simulate(p) was the simulator's latest call (start_us/end_us/last_result
  // describe p).  Fills `features` (num_pairs() x kNumFeatures, row-major) and `moves`.
  void compute(const Simulator& sim, const Placement& p, std::vector<float>* features,
               std::vector<Move>* moves);

  // Slack of every op in the latest compute(): how much later it could end without delaying
  // the step (transfers priced without contention), from a backward pass over the schedule.
  const std::vector<double>& slack_us() const { return slack_; }

 private:
  const Graph& g_;
  const Cluster& c_;
  int n_ = 0, num_dev_ = 0;
  std::vector<double> slack_, latest_end_, load_, dev_end_, bus_load_;
  std::vector<NodeId> by_start_;
  std::vector<NodeId> next_on_device_;
  std::vector<double> near_bytes_;   // per device: transfer time to/from v's neighbours there
  std::vector<int32_t> near_count_;  // per device: v's neighbours there
  std::vector<double> ready_;        // per device: when v's inputs could be there
};

}  // namespace placeto
