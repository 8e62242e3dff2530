// A small deterministic simulated-annealing placer over the simulator, private to the report
// tools in launch/ (the project's real placers live elsewhere).  It answers "what speed-up
// over one device does a good placement reach?" for docs/FAMILIES.md.  Moves: one op to
// another device, or an op together with its gradient, update and gradient-sum ops (names
// "<op>/grad", "<op>/update", "<op>/grad_sum").  Not thread-safe; one per thread.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/cluster.h"
#include "sim/graph.h"

namespace placeto {

struct LocalSearchOptions {
  int iterations = 20000;  // simulations per restart
  int restarts = 1;
  double start_temperature = 0.03;  // relative to the current runtime
  double end_temperature = 1e-4;
  uint64_t seed = 1;
};

struct LocalSearchResult {
  Placement best;
  double best_runtime_us = 0;
  double single_device_us = 0;  // everything on device 0
  int simulations = 0;
};

// Starts from `start` (all on device 0 when null).  With `tied` (a group id per op), ops of
// one group always move together: a search over placements of a coarse graph, scored by
// simulating the ops themselves.
LocalSearchResult anneal_placement(const Graph& g, const Cluster& c, const LocalSearchOptions& opt,
                                   const Placement* start = nullptr,
                                   const std::vector<int32_t>* tied = nullptr);

}  // namespace placeto
