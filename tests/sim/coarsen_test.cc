// Coarsening: the coarse graph is acyclic with at most K nodes, costs and parameters are
// conserved, every op maps to a group, cut tensors become edges, and placements map back.
#include "sim/coarsen.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <random>

#include "common/error.h"
#include "sim/coarse_map.h"
#include "sim/families/family.h"
#include "sim/graph_io.h"
#include "sim/simulator.h"

namespace placeto {
namespace {

Graph family_graph(const std::string& family, int index) {
  FamilySpec spec;
  spec.family = family;
  return generate_graph(spec, index, 3);
}

void expect_valid(const Graph& g, const CoarseGraph& c, int k) {
  ASSERT_EQ(static_cast<int>(c.group.size()), g.num_nodes());
  EXPECT_LE(c.graph.num_nodes(), k);
  EXPECT_EQ(static_cast<int>(c.graph.topo_order().size()), c.graph.num_nodes());  // acyclic
  std::vector<int> members(c.graph.num_nodes(), 0);
  for (int32_t gid : c.group) {
    ASSERT_GE(gid, 0);
    ASSERT_LT(gid, c.graph.num_nodes());
    ++members[gid];
  }
  for (int m : members) EXPECT_GT(m, 0);
  EXPECT_NEAR(c.graph.total_cost_us(), g.total_cost_us(), 1e-6 * g.total_cost_us());
  int64_t params = 0, coarse_params = 0;
  for (NodeId v = 0; v < g.num_nodes(); ++v) params += g.param_bytes(v);
  for (NodeId v = 0; v < c.graph.num_nodes(); ++v) coarse_params += c.graph.param_bytes(v);
  EXPECT_EQ(params, coarse_params);
  // Every cut edge of the fine graph appears between the same groups; no coarse edge
  // without a cut edge.
  for (EdgeId e = 0; e < g.num_edges(); ++e) {
    const int32_t a = c.group[g.edge_src(e)], b = c.group[g.edge_dst(e)];
    if (a == b) continue;
    bool found = false;
    for (int i = c.graph.child_begin(a); i < c.graph.child_end(a); ++i)
      found = found || c.graph.edge_dst(c.graph.child_edges()[i]) == b;
    EXPECT_TRUE(found);
  }
  // Total bytes on coarse edges (each output once per destination) equal the cut bytes.
  int64_t coarse_cut = 0;
  for (EdgeId e = 0; e < c.graph.num_edges(); ++e) coarse_cut += c.graph.edge_bytes(e);
  EXPECT_EQ(coarse_cut, cut_bytes(g, c.group));
}

TEST(Coarsen, FamilyGraphsStayAcyclicAndConserveCosts) {
  for (const char* family : {"cifar10", "ptb", "nmt"}) {
    SCOPED_TRACE(family);
    Graph g = family_graph(family, 1);
    for (int k : {1, 7, 40, 120}) {
      CoarseGraph c = coarsen(g, k);
      expect_valid(g, c, k);
    }
    // Asking for more groups than ops keeps every op alone.
    CoarseGraph same = coarsen(g, g.num_nodes() + 5);
    EXPECT_EQ(same.graph.num_nodes(), g.num_nodes());
    expect_valid(g, chunk_topological(g, 40), 40);
  }
}

// A ptb graph of several thousand ops: coarsened window by window and level by level
// (kCoarsenWindowOps), acyclic with at most K groups.
TEST(Coarsen, GraphsAboveTheWindowAreCoarsenedLevelByLevel) {
  FamilySpec spec;
  spec.family = "ptb";
  spec.steps = 32;
  spec.cell_nodes = 16;
  spec.layers = 4;
  const Graph g = generate_graph(spec, 0, 7);
  ASSERT_GT(g.num_nodes(), 3 * kCoarsenWindowOps);
  for (int k : {1, 2, 5, 64, 256, 2000}) {
    SCOPED_TRACE(k);
    expect_valid(g, coarsen(g, k), k);
  }
  // With labels (a placement's devices), no group mixes two labels, whether the graph is
  // coarsened whole or level by level.
  for (const Graph* graph : {&g, static_cast<const Graph*>(nullptr)}) {
    const Graph small = family_graph("nmt", 3);
    const Graph& h = graph ? *graph : small;
    std::vector<int32_t> label(static_cast<size_t>(h.num_nodes()));
    for (int i = 0; i < h.num_nodes(); ++i)
      label[h.topo_order()[i]] = static_cast<int32_t>(i * 4 / h.num_nodes());  // 4 runs
    const CoarseGraph c = coarsen(h, 64, &label);
    EXPECT_EQ(static_cast<int>(c.graph.topo_order().size()), c.graph.num_nodes());
    std::vector<int32_t> group_label(static_cast<size_t>(c.graph.num_nodes()), -1);
    for (NodeId v = 0; v < h.num_nodes(); ++v) {
      int32_t& l = group_label[c.group[v]];
      if (l < 0) l = label[v];
      EXPECT_EQ(l, label[v]) << v;
    }
    EXPECT_LE(c.graph.num_nodes(), 64);  // contiguous labels leave room to merge
  }
  // Windows do not give up the contraction's gain over plain chunks.
  EXPECT_LT(cut_bytes(g, coarsen(g, 256).group), cut_bytes(g, chunk_topological(g, 256).group));
}

TEST(Coarsen, CutsLessThanTopologicalChunking) {
  for (const char* family : {"cifar10", "ptb", "nmt"}) {
    Graph g = family_graph(family, 2);
    EXPECT_LT(cut_bytes(g, coarsen(g, 40).group), cut_bytes(g, chunk_topological(g, 40).group))
        << family;
  }
}

TEST(Coarsen, UngroupGivesEveryOpItsGroupsDevice) {
  Graph g = family_graph("ptb", 0);
  CoarseGraph c = coarsen(g, 30);
  std::mt19937_64 rng(1);
  Placement coarse(3, c.graph.num_nodes());
  for (auto& d : coarse.device) d = static_cast<int32_t>(rng() % 3);
  Placement fine = ungroup(c, coarse);
  ASSERT_EQ(fine.num_devices, 3);
  ASSERT_EQ(static_cast<int>(fine.device.size()), g.num_nodes());
  for (NodeId v = 0; v < g.num_nodes(); ++v) EXPECT_EQ(fine.device[v], coarse.device[c.group[v]]);
  validate_placement(g, fine, "ungrouped");
  // Both simulate; all ops on one device give the same total compute either way.
  Cluster one = default_cluster(1);
  Simulator fs(g, one), cs(c.graph, one);
  Placement f1(1, g.num_nodes(), 0), c1(1, c.graph.num_nodes(), 0);
  EXPECT_GT(fs.simulate(f1).runtime_us, cs.simulate(c1).runtime_us);  // fewer gaps coarse
}

TEST(Coarsen, MapFileRoundTripsAndRejectsBadMaps) {
  Graph g = family_graph("nmt", 0);
  CoarseGraph c = coarsen(g, 25);
  const std::string path = (std::filesystem::temp_directory_path() / "placeto_map.json").string();
  save_coarse_map(g, c, path);
  CoarseGraph back = load_coarse_map(path, g);
  EXPECT_EQ(back.group, c.group);
  EXPECT_EQ(back.graph.num_nodes(), c.graph.num_nodes());
  // A grouping that puts a forward op and its gradient in one group and the op between them
  // in another is cyclic.
  std::vector<int32_t> bad(g.num_nodes(), 0);
  const NodeId loss = g.find("loss");
  ASSERT_GE(loss, 0);
  bad[loss] = 1;
  EXPECT_THROW(build_coarse_graph(g, bad, 2), InputError);
}

TEST(Coarsen, SmallHandGraph) {
  // a -> b -> d, a -> c -> d with a heavy a->b edge: a and b group first.
  GraphBuilder b("hand");
  b.add_node("a", "op", 1, {1000, 10});
  b.add_node("b", "op", 1, {10});
  b.add_node("c", "op", 1, {10});
  b.add_node("d", "op", 1, {});
  b.add_edge("a", "b", 0);
  b.add_edge("a", "c", 1);
  b.add_edge("b", "d");
  b.add_edge("c", "d");
  Graph g = b.build();
  CoarseGraph c = coarsen(g, 3);
  expect_valid(g, c, 3);
  EXPECT_EQ(c.group[0], c.group[1]);
  CoarseGraph two = coarsen(g, 2);
  expect_valid(g, two, 2);
  CoarseGraph one = coarsen(g, 1);
  EXPECT_EQ(one.graph.num_nodes(), 1);
  EXPECT_EQ(one.graph.num_edges(), 0);
}

// in -> a -> b -> {c1 -> c2, d1} -> j -> out, every op but in and out with its /grad and
// /update ops and the backward edges of a training graph.
TEST(ForwardChains, StacksContinueAndForksAndJoinsStartChains) {
  GraphBuilder b("chains");
  const std::vector<std::string> trained = {"a", "b", "c1", "c2", "d1", "j"};
  for (const char* op : {"in", "a", "b", "c1", "c2", "d1", "j", "out"})
    b.add_node(op, "op", 1, {10});
  for (const std::string& op : trained) {
    b.add_node(op + "/grad", "grad", 1, {10});
    b.add_node(op + "/update", "update", 1, {});
    b.add_edge(op, op + "/grad");
    b.add_edge(op + "/grad", op + "/update");
  }
  for (auto [x, y] : std::vector<std::pair<std::string, std::string>>{{"in", "a"},
                                                                      {"a", "b"},
                                                                      {"b", "c1"},
                                                                      {"c1", "c2"},
                                                                      {"b", "d1"},
                                                                      {"c2", "j"},
                                                                      {"d1", "j"},
                                                                      {"j", "out"}}) {
    b.add_edge(x, y);
    if (y != "out" && x != "in") b.add_edge(y + "/grad", x + "/grad");
  }
  b.add_edge("out", "j/grad");
  const Graph g = b.build();
  const ForwardChains f = forward_chains(g);
  ASSERT_EQ(f.chains.size(), 4u);
  auto chain = [&](const char* op) { return f.chain[g.find(op)]; };
  auto position = [&](const char* op) { return f.position[g.find(op)]; };
  EXPECT_EQ(chain("a"), chain("in"));
  EXPECT_EQ(chain("b"), chain("in"));
  EXPECT_EQ(position("in"), 0);
  EXPECT_EQ(position("b"), 2);
  EXPECT_EQ(chain("c2"), chain("c1"));
  EXPECT_EQ(position("c2"), 1);
  EXPECT_NE(chain("d1"), chain("c1"));
  EXPECT_NE(chain("d1"), chain("b"));
  EXPECT_NE(chain("j"), chain("c2"));
  EXPECT_EQ(chain("out"), chain("j"));
  EXPECT_EQ(position("out"), 1);
  EXPECT_EQ(f.chains[chain("in")].size(), 3u);
  EXPECT_EQ(f.chains[chain("d1")].size(), 1u);
  // Training ops share their forward op's chain and position.
  for (const std::string& op : trained)
    for (const char* suffix : {"/grad", "/update"}) {
      EXPECT_EQ(f.chain[g.find(op + suffix)], f.chain[g.find(op)]) << op << suffix;
      EXPECT_EQ(f.position[g.find(op + suffix)], f.position[g.find(op)]) << op << suffix;
    }
}

TEST(ForwardChains, EveryOpOfAFamilyGraphIsInExactlyOneChain) {
  for (const char* family : {"ptb", "nmt", "cifar10"}) {
    const Graph g = family_graph(family, 0);
    const ForwardChains f = forward_chains(g);
    std::vector<int> seen(g.num_nodes(), 0);
    for (size_t c = 0; c < f.chains.size(); ++c)
      for (size_t i = 0; i < f.chains[c].size(); ++i) {
        ASSERT_FALSE(f.chains[c][i].empty()) << family;
        for (NodeId v : f.chains[c][i]) {
          ++seen[v];
          EXPECT_EQ(f.chain[v], static_cast<int32_t>(c)) << family;
          EXPECT_EQ(f.position[v], static_cast<int32_t>(i)) << family;
        }
      }
    for (NodeId v = 0; v < g.num_nodes(); ++v) EXPECT_EQ(seen[v], 1) << family << " op " << v;
    // On cifar10 units continue chains: fewer chains than training groups, and a long one.
    // (In the generated ptb and nmt graphs every op also reads a weight op shared by the
    // unrolled steps, so no unit has a single forward parent: every chain is one unit.)
    const std::vector<int32_t> groups = training_op_groups(g);
    const int32_t num_groups = *std::max_element(groups.begin(), groups.end()) + 1;
    size_t longest = 0;
    for (const auto& chain : f.chains) longest = std::max(longest, chain.size());
    if (std::string(family) == "cifar10") {
      EXPECT_LT(static_cast<int32_t>(f.chains.size()), num_groups) << family;
      EXPECT_GE(longest, 3u) << family;
    } else {
      EXPECT_EQ(static_cast<int32_t>(f.chains.size()), num_groups) << family;
    }
  }
}

// A training op without inputs (here an update that is a source) comes first in the
// topological order; the forward op still heads its group, so the stack stays one chain.
TEST(ForwardChains, TheForwardOpHeadsItsGroupWhateverTheOrder) {
  GraphBuilder b("sources");
  for (const char* op : {"x/update", "in", "x", "y"}) b.add_node(op, "op", 1, {10});
  b.add_edge("in", "x");
  b.add_edge("x", "y");
  b.add_edge("x/update", "y");
  const Graph g = b.build();
  ASSERT_EQ(g.topo_order().front(), g.find("x/update"));
  const ForwardChains f = forward_chains(g);
  EXPECT_EQ(f.chains.size(), 1u);
  EXPECT_EQ(f.chain[g.find("y")], f.chain[g.find("in")]);
  EXPECT_EQ(f.position[g.find("x/update")], f.position[g.find("x")]);
  EXPECT_EQ(f.position[g.find("y")], 2);
}

// Without training ops every op is its own unit: a fork into two branches that join.
TEST(ForwardChains, WithoutTrainingOpsEveryOpIsAUnit) {
  GraphBuilder b("plain");
  for (const char* op : {"a", "b", "c", "d", "e"}) b.add_node(op, "op", 1, {10});
  b.add_edge("a", "b");
  b.add_edge("b", "c");
  b.add_edge("a", "d");
  b.add_edge("c", "e");
  b.add_edge("d", "e");
  const Graph g = b.build();
  const ForwardChains f = forward_chains(g);
  EXPECT_EQ(f.chains.size(), 4u);  // a; b -> c; d; e
  EXPECT_EQ(f.chain[g.find("c")], f.chain[g.find("b")]);
  EXPECT_EQ(f.position[g.find("c")], 1);
  for (const auto& chain : f.chains)
    for (const auto& unit : chain) EXPECT_EQ(unit.size(), 1u);
}

}  // namespace
}  // namespace placeto
