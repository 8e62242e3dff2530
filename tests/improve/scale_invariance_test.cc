// Issue #35 item 2: the move scorer's features are relative, so a graph and cluster whose
// costs are in other units read the same.  Scaling every time of a graph and its cluster by
// one factor (op costs, gaps and link latencies times k, bandwidths divided by k) leaves every
// what-if feature, and so the scorer's ranking of the moves, unchanged; so does scaling every
// byte, capacity and bandwidth together.  With k a power of two the scaled arithmetic is
// exact and the features are bit-identical; with k = 10 they agree to rounding.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "improve/search_placers.h"
#include "improve/what_if.h"
#include "sim/simulator.h"
#include "tests/placers/random_dag.h"

namespace placeto {
namespace {

Graph base_graph() {
  testing::RandomDagOptions o;
  o.num_ops = 120;
  o.width = 6;
  o.param_fraction = 0.3;
  return testing::random_layered_dag(o, 17);
}

// g with every cost times time_k and every byte count times byte_k.
Graph scaled_graph(const Graph& g, double time_k, int64_t byte_k) {
  GraphBuilder b("scaled");
  b.set_name(g.name());
  for (NodeId v = 0; v < g.num_nodes(); ++v) {
    std::vector<int64_t> outs;
    for (int i = 0; i < g.num_outputs(v); ++i) outs.push_back(g.out_bytes(v, i) * byte_k);
    b.add_node(g.node_name(v), g.op_type(v), g.cost_us(v) * time_k, outs,
               g.param_bytes(v) * byte_k);
  }
  for (EdgeId e = 0; e < g.num_edges(); ++e)
    b.add_edge(g.edge_src(e), g.edge_dst(e), g.edge_out(e));
  return b.build();
}

// Four heterogeneous devices of different speeds, per-link latencies and bandwidths from the
// profile, per-link contention; capacity (0: none) on every device.
Cluster base_cluster(double capacity) {
  Cluster c = default_cluster(4);
  c.mode = SimMode::kHeterogeneous;
  c.hetero.contention = Contention::kPerLink;
  const double speeds[] = {1.0, 1.0, 2.0, 0.5};
  for (int d = 0; d < 4; ++d) {
    c.devices[d].speed = speeds[d];
    c.devices[d].node = d / 2;
    c.devices[d].memory_bytes = capacity;
  }
  c.derive_links();
  return c;
}

// c with every time times time_k (gaps, latencies; bandwidth / time_k) and every byte
// (capacities; bandwidth x byte_k) times byte_k.
Cluster scaled_cluster(Cluster c, double time_k, double byte_k) {
  c.hetero.op_gap_us *= time_k;
  c.hetero.transfer_gap_us *= time_k;
  for (LinkSpec& l : c.links) {
    l.latency_us *= time_k;
    l.bytes_per_us = l.bytes_per_us * byte_k / time_k;
  }
  for (DeviceSpec& d : c.devices) d.memory_bytes *= byte_k;
  return c;
}

struct Seen {
  std::vector<float> features, scores;
  std::vector<Move> moves;
  double runtime_us = 0;
};

Seen look(const Graph& g, const Cluster& c, const Placement& p, MoveScorer& scorer) {
  Simulator sim(g, c);
  Seen s;
  s.runtime_us = sim.simulate(p).runtime_us;
  WhatIf w(g, c);
  w.compute(sim, p, &s.features, &s.moves);
  s.scores.resize(s.moves.size());
  scorer.score(s.features.data(), s.moves.size(), s.scores.data(), WhatIf::kNumFeatures);
  return s;
}

Placement spread(const Graph& g) {
  Placement p(4, g.num_nodes());
  for (NodeId v = 0; v < g.num_nodes(); ++v) p.device[v] = (v / 7 + v % 3) % 4;
  return p;
}

// The moves in the scorer's order (ties by index).
std::vector<size_t> ranking(const std::vector<float>& scores) {
  std::vector<size_t> order(scores.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return scores[a] > scores[b]; });
  return order;
}

void expect_same_view(const Seen& a, const Seen& b, bool exact, const char* what) {
  ASSERT_EQ(a.features.size(), b.features.size());
  if (exact) {
    EXPECT_EQ(a.features, b.features) << what;
    EXPECT_EQ(ranking(a.scores), ranking(b.scores)) << what;
    return;
  }
  for (size_t i = 0; i < a.features.size(); ++i)
    ASSERT_NEAR(a.features[i], b.features[i], 2e-5)
        << what << ": feature " << WhatIf::kFeatureNames[i % WhatIf::kNumFeatures] << " of row "
        << i / WhatIf::kNumFeatures;
  // Rounding may reorder moves whose scores agree to 1e-4; nothing else may move.
  const std::vector<size_t> ra = ranking(a.scores), rb = ranking(b.scores);
  for (size_t k = 0; k < ra.size(); ++k)
    EXPECT_NEAR(a.scores[ra[k]], b.scores[rb[k]], 1e-4) << what << ": rank " << k;
}

MoveScorer shipped_scorer() {
  return load_scorer(std::string(PLACETO_TEST_DATA) + "/../../models/ptb.h5").scorer;
}

TEST(ScaleInvariance, ScalingEveryTimeLeavesTheScorersViewUnchanged) {
  const Graph g = base_graph();
  const Cluster c = base_cluster(0);
  const Placement p = spread(g);
  MoveScorer scorer = shipped_scorer();
  const Seen before = look(g, c, p, scorer);
  for (double k : {8.0, 0.125, 10.0}) {
    const Graph gk = scaled_graph(g, k, 1);
    const Cluster ck = scaled_cluster(c, k, 1);
    const Seen after = look(gk, ck, p, scorer);
    EXPECT_NEAR(after.runtime_us, k * before.runtime_us, 1e-9 * k * before.runtime_us);
    const bool exact = k != 10.0;
    expect_same_view(before, after, exact, exact ? "time x power of two" : "time x 10");
  }
}

TEST(ScaleInvariance, ScalingEveryByteCapacityAndBandwidthLeavesTheScorersViewUnchanged) {
  const Graph g = base_graph();
  // Capacity: 15% of the sum of all ops' bytes, so some devices of the placement overflow.
  int64_t total = 0;
  for (NodeId v = 0; v < g.num_nodes(); ++v) total += g.param_bytes(v) + g.total_out_bytes(v);
  const Cluster c = base_cluster(0.15 * static_cast<double>(total));
  const Placement p = spread(g);
  MoveScorer scorer = shipped_scorer();
  const Seen before = look(g, c, p, scorer);
  bool some_over = false;
  for (size_t i = 0; i < before.moves.size(); ++i)
    some_over |= before.features[i * WhatIf::kNumFeatures + 27] < 0;  // headroom_here
  EXPECT_TRUE(some_over) << "the capacity should bind somewhere";
  for (int64_t k : {4, 1024, 10}) {
    const Graph gk = scaled_graph(g, 1, k);
    const Cluster ck = scaled_cluster(c, 1, static_cast<double>(k));
    const Seen after = look(gk, ck, p, scorer);
    const bool exact = k != 10;
    expect_same_view(before, after, exact, exact ? "bytes x power of two" : "bytes x 10");
  }
}

}  // namespace
}  // namespace placeto
