// Random layered DAGs for placer tests and benchmarks (the real graph families live in
// sim/; this is a small, seedable stand-in with the same ranges of costs and tensor sizes).
#pragma once

#include <cstdint>
#include <string>

#include "sim/graph.h"

namespace placeto {
namespace testing {

struct RandomDagOptions {
  int num_ops = 100;
  int width = 8;        // ops per layer (the last layer may be smaller)
  int max_parents = 3;  // each op past the first layer has 1..max_parents parents
  double min_cost_us = 10, max_cost_us = 1000;      // log-uniform
  double min_out_bytes = 1e3, max_out_bytes = 1e7;  // log-uniform
  double param_fraction = 0;  // fraction of ops with parameters (param_bytes = 4x out_bytes)
};

// Deterministic in (options, seed).  Parents come from the previous layer, or with
// probability 1/4 from any earlier layer (skip connections).
Graph random_layered_dag(const RandomDagOptions& options, uint64_t seed,
                         const std::string& name = "random_dag");

}  // namespace testing
}  // namespace placeto
