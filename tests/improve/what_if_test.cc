// What-if features: one row per (op, other device), every value finite, and the features
// that can be checked by hand agree with the schedule.
#include "improve/what_if.h"

#include <gtest/gtest.h>

#include <cmath>

#include "sim/simulator.h"
#include "tests/placers/placer_test_graphs.h"
#include "tests/placers/random_dag.h"

namespace placeto {
namespace {

Graph random_graph(int ops, uint64_t seed) {
  testing::RandomDagOptions o;
  o.num_ops = ops;
  o.width = 6;
  return testing::random_layered_dag(o, seed);
}

// Simulates p and computes its what-if rows.
struct Rows {
  std::vector<float> f;
  std::vector<Move> moves;
  std::vector<double> slack;
};
Rows rows_of(const Graph& g, const Cluster& c, const Placement& p) {
  Simulator sim(g, c);
  sim.simulate(p);
  WhatIf w(g, c);
  Rows r;
  w.compute(sim, p, &r.f, &r.moves);
  r.slack = w.slack_us();
  return r;
}

TEST(WhatIf, OneRowPerOpAndOtherDeviceOnEveryDeviceCount) {
  const Graph g = random_graph(40, 3);
  for (int d : {2, 3, 4, 8}) {
    const Cluster c = default_cluster(d);
    Placement p(d, g.num_nodes());
    for (int v = 0; v < g.num_nodes(); ++v) p.device[v] = v % d;
    const Rows r = rows_of(g, c, p);
    const std::vector<float>& f = r.f;
    const std::vector<Move>& moves = r.moves;
    ASSERT_EQ(moves.size(), static_cast<size_t>(g.num_nodes()) * (d - 1));
    ASSERT_EQ(f.size(), moves.size() * WhatIf::kNumFeatures);
    size_t row = 0;
    for (NodeId v = 0; v < g.num_nodes(); ++v)
      for (int t = 0; t < d; ++t) {
        if (t == p.device[v]) continue;
        EXPECT_EQ(moves[row].op, v);
        EXPECT_EQ(moves[row].device, t);
        ++row;
      }
    for (float x : f) ASSERT_TRUE(std::isfinite(x));
    for (size_t r = 0; r < moves.size(); ++r)
      EXPECT_FLOAT_EQ(f[r * WhatIf::kNumFeatures + 18], 1.0f / d);  // inverse_devices
  }
}

TEST(WhatIf, SlackIsZeroOnTheCriticalPathOfAChain) {
  // A chain on one device: every op is critical.
  const Graph g = testing::chain_graph(8, 100, 4096);
  const Cluster c = default_cluster(2);
  const Placement p(2, g.num_nodes(), 0);
  const Rows r = rows_of(g, c, p);
  const std::vector<float>& f = r.f;
  for (NodeId v = 0; v < g.num_nodes(); ++v) {
    EXPECT_NEAR(r.slack[v], 0.0, 1e-6) << v;
    EXPECT_EQ(f[v * WhatIf::kNumFeatures + 3], 1.0f);  // critical
  }
  // Moving a middle op off the shared device adds both of its transfers and removes none.
  const size_t mid = 4;
  EXPECT_GT(f[mid * WhatIf::kNumFeatures + 9], 0.0f);   // transfers_added
  EXPECT_EQ(f[mid * WhatIf::kNumFeatures + 8], 0.0f);   // transfers_removed
  EXPECT_EQ(f[mid * WhatIf::kNumFeatures + 11], 0.0f);  // neighbours_there
  EXPECT_EQ(f[mid * WhatIf::kNumFeatures + 12], 1.0f);  // neighbours_here
}

TEST(WhatIf, MovingAnOpToItsNeighboursDeviceRemovesTheirTransfers) {
  const Graph g = testing::chain_graph(3, 100, 1 << 20);
  const Cluster c = default_cluster(2);
  Placement p(2, 3, 0);
  p.device[1] = 1;  // the middle op alone on device 1: two transfers
  const Rows r = rows_of(g, c, p);
  const std::vector<float>& f = r.f;
  const std::vector<Move>& moves = r.moves;
  // Row 1 is (op 1 -> device 0).
  ASSERT_EQ(moves[1].op, 1);
  ASSERT_EQ(moves[1].device, 0);
  const float* row = f.data() + 1 * WhatIf::kNumFeatures;
  EXPECT_GT(row[8], 0.0f);   // both transfers removed
  EXPECT_EQ(row[9], 0.0f);   // none added
  EXPECT_LT(row[10], 0.0f);  // net: fewer transfers
  EXPECT_EQ(row[11], 1.0f);  // all neighbours there
  EXPECT_GT(row[6], 0.0f);   // it could start earlier there (no transfer to wait for)
}

// The memory columns (27-30): neutral without capacities; with them, a move off a device
// that overflows onto one with room lowers the overflow, and the reverse raises it.
TEST(WhatIf, MemoryColumnsSeeHeadroomAndTheMovesOverflow) {
  const Graph g = random_graph(60, 5);
  Placement p(2, g.num_nodes(), 0);
  for (int v = 0; v < g.num_nodes(); v += 5) p.device[v] = 1;  // most ops on device 0
  {
    const Rows r = rows_of(g, default_cluster(2), p);
    for (size_t i = 0; i < r.moves.size(); ++i) {
      const float* row = r.f.data() + i * WhatIf::kNumFeatures;
      EXPECT_EQ(row[27], 1.0f);
      EXPECT_EQ(row[28], 1.0f);
      EXPECT_EQ(row[29], 0.0f);
      EXPECT_EQ(row[30], 0.0f);
    }
  }
  // Capacity: the whole graph's need on one device x 0.6, so device 0 overflows, device 1
  // has room.
  Cluster c = default_cluster(2);
  Simulator sim(g, c);
  const SimResult& one = sim.simulate(Placement(2, g.num_nodes(), 0));
  const double cap = 0.6 * static_cast<double>(one.peak_mem_bytes[0] + one.param_bytes[0]);
  for (DeviceSpec& d : c.devices) d.memory_bytes = cap;
  const Rows r = rows_of(g, c, p);
  int off = 0, onto = 0;
  for (size_t i = 0; i < r.moves.size(); ++i) {
    const float* row = r.f.data() + i * WhatIf::kNumFeatures;
    const bool big = g.param_bytes(r.moves[i].op) + g.total_out_bytes(r.moves[i].op) > 0;
    if (r.moves[i].device == 1) {  // off the overflowing device 0
      EXPECT_LT(row[27], 0.0f);    // no headroom here
      if (big) {
        EXPECT_LT(row[29], 0.0f);
        ++off;
      }
    } else {
      EXPECT_GT(row[27], 0.0f);  // device 1 has room
      if (big) {
        EXPECT_GT(row[29], 0.0f);
        ++onto;
      }
    }
    EXPECT_GE(row[30], 0.0f);
  }
  EXPECT_GT(off, 0);
  EXPECT_GT(onto, 0);
}

}  // namespace
}  // namespace placeto
