#include "tests/placers/placer_test_graphs.h"

namespace placeto {
namespace testing {

Graph chain_graph(int n, double cost_us, int64_t bytes, const std::string& name) {
  GraphBuilder b(name);
  b.set_name(name);
  for (int i = 0; i < n; ++i) {
    b.add_node("n" + std::to_string(i), "Op", cost_us, {bytes});
    if (i > 0) b.add_edge(i - 1, i);
  }
  return b.build();
}

Graph parallel_chains_graph(int chains, int length, double cost_us, int64_t bytes) {
  GraphBuilder b("parallel_chains");
  b.set_name("parallel_chains");
  for (int k = 0; k < chains; ++k)
    for (int i = 0; i < length; ++i) {
      const NodeId v =
          b.add_node("c" + std::to_string(k) + "_" + std::to_string(i), "Op", cost_us, {bytes});
      if (i > 0) b.add_edge(v - 1, v);
    }
  return b.build();
}

Graph fork_join_graph(int branches, double branch_cost_us, int64_t bytes) {
  GraphBuilder b("fork_join");
  b.set_name("fork_join");
  const NodeId src = b.add_node("source", "Op", 10, {bytes});
  std::vector<NodeId> mids;
  for (int i = 0; i < branches; ++i)
    mids.push_back(b.add_node("branch" + std::to_string(i), "Op", branch_cost_us, {bytes}));
  const NodeId sink = b.add_node("sink", "Op", 10, {bytes});
  for (NodeId m : mids) {
    b.add_edge(src, m);
    b.add_edge(m, sink);
  }
  return b.build();
}

Cluster cluster_with_memory(int d, double memory_bytes) {
  Cluster c = default_cluster(d);
  for (auto& dev : c.devices) dev.memory_bytes = memory_bytes;
  return c;
}

}  // namespace testing
}  // namespace placeto
