// Scoring a placement the way every report does: simulated runtime, peak memory,
// feasibility against the cluster's capacities, and the ratio to a runtime lower bound.
// Also run_placer(), which times a placer and evaluates its result, the one code path used by
// `placeto place`, `placeto compare` and the tests.
//
// Threading: free functions without shared state; each call builds its own Simulator.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/cluster.h"
#include "sim/graph.h"
#include "sim/placers/memory_rule.h"
#include "sim/placers/placer.h"
#include "sim/simulator.h"

namespace placeto {

struct PlacementEvaluation {
  double runtime_us = 0;
  std::vector<int64_t> peak_mem_bytes;  // activations, per device
  std::vector<int64_t> param_bytes;     // resident parameters, per device
  int64_t peak_mem_bytes_max = 0;       // max over devices of peak activations
  // Simulated peak + parameters within capacity on every device (SimResult::memory_ok).
  bool feasible = true;
  std::vector<int> over_capacity_devices;
  MemoryOverflow overflow;  // how far over the capacities (memory_rule.h); zero when feasible
  double lower_bound_us = 0;
  double ratio_to_lb = 0;  // runtime / lower bound (0 when the bound is 0)
};

// max(sum over ops of their fastest compute time / D, critical path of fastest compute times),
// in the cluster's cost view.  Transfers and per-op gaps are left out, so it is a true bound.
double runtime_lower_bound_us(const Graph& graph, const Cluster& cluster);

PlacementEvaluation evaluate_placement(const Graph& graph, const Cluster& cluster,
                                       const Placement& placement);
// Same, reusing a Simulator bound to the graph and cluster.
PlacementEvaluation evaluate_placement(Simulator& sim, const Placement& placement,
                                       double lower_bound_us);

// "devices 0, 2 over capacity (gpu0: 9.1e+09 of 8e+09 bytes, ...)"; "" when feasible.
std::string describe_infeasibility(const Cluster& cluster, const PlacementEvaluation& e);

struct PlacerRun {
  std::string method;
  Placement placement;
  PlacementEvaluation evaluation;
  double place_ms = 0;  // wall time of Placer::place
  // Empty when feasible, otherwise "no feasible placement found: ...".
  std::string message;
  // What the placer reported besides its placement (PlacerStats::note), e.g. that it fell back
  // to another placer's answer; empty when nothing.
  std::string note;
};

PlacerRun run_placer(const Placer& placer, const Graph& graph, const Cluster& cluster,
                     const PlacerOptions& options);

}  // namespace placeto
