// The heterogeneous simulator mode: it reduces to the compatible mode where its model says it
// must (unit speeds, compatible link speed, zero latency, at most two devices), hand-computed
// cases for speeds, latency and the two contention models, and the conformance rules (every
// op runs once, devices run one op at a time, no op starts before its inputs arrive).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <random>

#include "common/json_util.h"
#include "sim/families/family.h"
#include "sim/graph_io.h"
#include "sim/simulator.h"

namespace placeto {
namespace {

// A heterogeneous cluster that uses the compatible mode's constants on every link.
Cluster compat_like(int d, Contention contention = Contention::kBus) {
  Cluster c = default_cluster(d);
  c.mode = SimMode::kHeterogeneous;
  c.hetero.contention = contention;
  for (int s = 0; s < d; ++s)
    for (int t = s + 1; t < d; ++t) c.link_overrides.push_back({s, t, {7600.0, 0.0}, true});
  c.derive_links();
  return c;
}

TEST(HeteroSimulator, ReducesToCompatibleOnOneAndTwoDevices) {
  int checked = 0;
  for (auto& entry : std::filesystem::directory_iterator(PLACETO_TEST_DATA "/sim_vectors")) {
    const std::string file = entry.path().string();
    Json doc = parse_json_file(file);
    Graph g = graph_from_json(doc["graph"], file);
    Json pdoc = {{"devices", doc["devices"]}, {"placement", doc["placement"]}};
    Placement p = placement_from_json(pdoc, g, file);
    // With three or more devices the compatible mode sends one transfer for all remote
    // children of an output; the heterogeneous mode one per destination, so they differ.
    if (p.num_devices > 2) continue;
    for (Contention k : {Contention::kBus, Contention::kPerLink}) {
      Cluster compat = default_cluster(p.num_devices);
      Cluster het = compat_like(p.num_devices, k);
      Simulator a(g, compat), b(g, het);
      const SimResult ra = a.simulate(p);
      const SimResult& rb = b.simulate(p);
      EXPECT_EQ(ra.runtime_us, rb.runtime_us) << file;
      EXPECT_EQ(ra.peak_mem_bytes, rb.peak_mem_bytes) << file;
      EXPECT_EQ(a.start_us(), b.start_us()) << file;
    }
    ++checked;
  }
  EXPECT_GE(checked, 5);
}

Graph fan_out_graph() {
  // a (10 us, 76000 bytes = 10 us at 7600 B/us) feeds b and c.
  GraphBuilder b("fan");
  b.add_node("a", "op", 10, {76000});
  b.add_node("b", "op", 10, {});
  b.add_node("c", "op", 10, {});
  b.add_edge("a", "b");
  b.add_edge("a", "c");
  return b.build();
}

TEST(HeteroSimulator, SpeedScalesComputeTime) {
  GraphBuilder b("one");
  b.add_node("a", "op", 10, {100});
  Graph g = b.build();
  Cluster c = compat_like(2);
  c.devices[1].speed = 2.0;
  Simulator sim(g, c);
  Placement p(2, 1, 1);
  EXPECT_DOUBLE_EQ(sim.simulate(p).runtime_us, 5.0 + 5.7);
  EXPECT_DOUBLE_EQ(c.op_time_us(10, 1), 5.0);
}

TEST(HeteroSimulator, LatencyDelaysArrivalButNotTheLink) {
  GraphBuilder b("pair");
  b.add_node("a", "op", 10, {7600});
  b.add_node("b", "op", 10, {});
  b.add_edge("a", "b");
  Graph g = b.build();
  Cluster c = compat_like(2);
  c.link_overrides = {{0, 1, {7600.0, 3.0}, true}};
  c.derive_links();
  Simulator sim(g, c);
  Placement p(2, 2, 0);
  p.device[1] = 1;
  const SimResult& r = sim.simulate(p);
  // a: 0-10; sent 10-11, arrives 14; b: 14-24 (+5.7); the link is free again at 11 + 25.
  EXPECT_DOUBLE_EQ(sim.start_us()[1], 14.0);
  EXPECT_DOUBLE_EQ(r.runtime_us, 36.0);
  EXPECT_DOUBLE_EQ(c.transfer_time_us(7600, 0, 1), 4.0);
}

TEST(HeteroSimulator, BusSerialisesDestinationsPerLinkDoesNot) {
  Graph g = fan_out_graph();
  Placement p(3, 3, 0);
  p.device[1] = 1;
  p.device[2] = 2;
  // Compatible: one transfer serves b and c: both start at 20; bus free at 45.
  {
    Cluster c = default_cluster(3);
    Simulator sim(g, c);
    EXPECT_DOUBLE_EQ(sim.simulate(p).runtime_us, 45.0);
    EXPECT_DOUBLE_EQ(sim.start_us()[2], 20.0);
  }
  // Bus: one transfer per destination, one after the other (the second after the gap).
  {
    Cluster c = compat_like(3, Contention::kBus);
    Simulator sim(g, c);
    ExecutionTrace trace;
    EXPECT_DOUBLE_EQ(sim.simulate(p, &trace).runtime_us, 80.0);
    EXPECT_DOUBLE_EQ(sim.start_us()[1], 20.0);
    EXPECT_DOUBLE_EQ(sim.start_us()[2], 55.0);
    ASSERT_EQ(trace.transfers.size(), 2u);
    EXPECT_EQ(trace.transfers[0].dst_device, 1);
    EXPECT_EQ(trace.transfers[1].dst_device, 2);
  }
  // Per link: the two transfers run at once.
  {
    Cluster c = compat_like(3, Contention::kPerLink);
    Simulator sim(g, c);
    EXPECT_DOUBLE_EQ(sim.simulate(p).runtime_us, 45.0);
    EXPECT_DOUBLE_EQ(sim.start_us()[2], 20.0);
  }
}

TEST(HeteroSimulator, ProfileCapacityFlagsOverfullDevices) {
  // 30 GB of weights fit an 80 GB H100 but not a 16 GB V100.
  GraphBuilder b("big");
  b.add_node("w", "Variable", 0, {}, 30'000'000'000);
  b.add_node("a", "op", 10, {100});
  b.add_edge("w", "a");
  Graph g = b.build();
  Placement p(2, 2, 0);
  Cluster h100 = profile_cluster("h100", 1, 2);
  Simulator sh(g, h100);
  EXPECT_TRUE(sh.simulate(p).memory_ok);
  Cluster v100 = profile_cluster("v100", 1, 2);
  Simulator sv(g, v100);
  const SimResult& r = sv.simulate(p);
  EXPECT_FALSE(r.memory_ok);
  EXPECT_TRUE(r.over_capacity[0]);
  EXPECT_FALSE(r.over_capacity[1]);
}

// Conformance: a family graph under random placements on clusters of each kind.
TEST(HeteroSimulator, ConformanceOnFamilyGraphs) {
  FamilySpec spec;
  spec.family = "nmt";
  spec.steps = 3;
  Graph g = generate_graph(spec, 0, 7);
  std::vector<Cluster> clusters = {profile_cluster("a100", 2, 2, Contention::kPerLink),
                                   profile_cluster("k80", 1, 3, Contention::kBus), compat_like(4)};
  clusters[1].devices[2].speed = 3.0;
  std::mt19937_64 rng(5);
  for (const Cluster& c : clusters) {
    Simulator sim(g, c);
    for (int trial = 0; trial < 5; ++trial) {
      Placement p(c.num_devices(), g.num_nodes());
      for (auto& d : p.device) d = static_cast<int32_t>(rng() % c.num_devices());
      ExecutionTrace trace;
      const double runtime = sim.simulate(p, &trace).runtime_us;
      ASSERT_EQ(static_cast<int>(trace.ops.size()), g.num_nodes()) << c.name;
      std::vector<std::vector<ExecutionTrace::OpSlice>> per_dev(c.num_devices());
      for (const auto& s : trace.ops) {
        EXPECT_NEAR(s.end_us - s.start_us, c.op_time_us(g.cost_us(s.op), s.device), 1e-9);
        EXPECT_LE(s.end_us, runtime);
        per_dev[s.device].push_back(s);
      }
      for (auto& ops : per_dev)
        for (size_t i = 1; i < ops.size(); ++i)
          EXPECT_GE(ops[i].start_us,
                    ops[i - 1].end_us + c.op_gap_us(g.cost_us(ops[i - 1].op)) - 1e-9);
      const auto& start = sim.start_us();
      const auto& end = sim.end_us();
      for (EdgeId e = 0; e < g.num_edges(); ++e) {
        const NodeId u = g.edge_src(e), v = g.edge_dst(e);
        EXPECT_GE(start[v] + 1e-9,
                  end[u] + c.transfer_time_us(g.edge_bytes(e), p.device[u], p.device[v]));
      }
      // The same placement gives the same schedule.
      const std::vector<double> first = start;
      EXPECT_EQ(sim.simulate(p).runtime_us, runtime);
      EXPECT_EQ(sim.start_us(), first);
    }
  }
}

}  // namespace
}  // namespace placeto
