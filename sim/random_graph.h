// Random layered DAGs for tests, benchmarks and fuzzing: not a model of real networks (see
// sim/families for those) but cheap, seeded and of any size.
#pragma once

#include <cstdint>

#include "sim/graph.h"

namespace placeto {

struct RandomGraphOptions {
  int num_nodes = 100;
  double edges_per_node = 2.4;  // average out-degree
  int max_span = 20;            // an edge joins nodes at most this far apart in the order
  double min_cost_us = 10, max_cost_us = 1000;
  int64_t min_bytes = 1000, max_bytes = 10000000;
  int max_outputs = 2;
  uint64_t seed = 1;
};

// Deterministic for a given options struct.
Graph make_random_graph(const RandomGraphOptions& options);
// The same with the defaults except the node count and seed.
Graph make_random_graph(int num_nodes, uint64_t seed);

// A placement with every op on a device drawn uniformly (seeded).
Placement make_random_placement(const Graph& g, int num_devices, uint64_t seed);

}  // namespace placeto
