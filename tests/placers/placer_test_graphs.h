// Small graphs and clusters shared by the placer tests.
#pragma once

#include <string>

#include "sim/cluster.h"
#include "sim/graph.h"

namespace placeto {
namespace testing {

// A chain of `n` ops of `cost_us`, each passing `bytes` to the next.
Graph chain_graph(int n, double cost_us, int64_t bytes, const std::string& name = "chain");
// `chains` independent chains of `length` ops each (names c<k>_<i>).
Graph parallel_chains_graph(int chains, int length, double cost_us, int64_t bytes);
// source -> `branches` parallel ops -> sink; the source has one output shared by all branches.
Graph fork_join_graph(int branches, double branch_cost_us, int64_t bytes);
// `d` devices, each with `memory_bytes` of capacity.
Cluster cluster_with_memory(int d, double memory_bytes);

}  // namespace testing
}  // namespace placeto
