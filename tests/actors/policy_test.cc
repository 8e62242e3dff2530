// The policy network, features and environment.
#include "actors/policy.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <string>

#include "actors/environment.h"
#include "actors/features.h"
#include "actors/policy_placer.h"
#include "actors/rollout.h"
#include "common/error.h"
#include "sim/coarsen.h"
#include "sim/placers/memory.h"
#include "sim/placers/memory_rule.h"
#include "sim/placers/registry.h"
#include "sim/random_graph.h"
#include "sim/simulator.h"

namespace placeto {
namespace {

// A 20-op graph at 3 devices, two steps into an episode.
struct TwoStepsIn {
  Graph g = make_random_graph(20, 3);
  Cluster c = default_cluster(3);
  PlacementEnv env{g, c, EnvConfig{}};
  TwoStepsIn() {
    std::mt19937_64 rng(1);
    env.reset(rng);
    env.step(1);
    env.step(2);
  }
};

// A seeded 3-device network with features `fc` and one step's features x of graph g (whose
// current node is `current`), to compare its logits on edited copies of x.
struct OneStep {
  PolicyNet net{nullptr};
  GraphTensors gt;
  torch::Tensor x, cur;
  OneStep(const Graph& g, const FeatureConfig& fc, std::vector<float>& features, NodeId current) {
    torch::manual_seed(0);
    PolicyConfig pc;
    pc.num_devices = 3;
    pc.features = fc;
    net = PolicyNet(pc);
    gt = make_graph_tensors(g, false);
    x = torch::from_blob(features.data(), {1, g.num_nodes(), feature_width(fc, 3)}).clone();
    cur = torch::tensor({static_cast<int64_t>(current)}, torch::kInt64);
  }
  torch::Tensor logits(const torch::Tensor& features) { return net->forward(features, cur, gt); }
};

TEST(Features, ColumnsAreNormalisedAndSigned) {
  TwoStepsIn state;
  PlacementEnv& env = state.env;
  FeatureConfig fc;
  const int w = feature_width(fc, 3);
  ASSERT_EQ(w, 8);
  std::vector<float> x(20 * w);
  build_features(env, fc, x.data());
  float max_cost = 0, min_dt = 0, max_dt = 0;
  int current = 0;
  for (int v = 0; v < 20; ++v) {
    const float* r = &x[v * w];
    max_cost = std::max(max_cost, r[0]);
    current += r[3] == 1.0f;
    min_dt = std::min(min_dt, r[4]);
    max_dt = std::max(max_dt, r[4]);
    float onehot = r[5] + r[6] + r[7];
    EXPECT_EQ(onehot, 1.0f);
    EXPECT_EQ(r[5 + env.placement().device[v]], 1.0f);
    EXPECT_GE(r[4], -1.0f);
    EXPECT_LE(r[4], 1.0f);
  }
  EXPECT_FLOAT_EQ(max_cost, 1.0f);
  EXPECT_EQ(current, 1);
  EXPECT_FLOAT_EQ(std::max(-min_dt, max_dt), 1.0f);  // divided by max |x|
  EXPECT_EQ(x[env.current_node() * w + 4], 0.0f);
}

// Lookahead columns: only the current node's row has them; they are the what-if objectives
// of the step, and the policy's logits follow them (the shared head reads them, the node
// transform does not).
TEST(Features, LookaheadColumnsDescribeEachChoiceOfTheStep) {
  TwoStepsIn state;
  const Graph& g = state.g;
  PlacementEnv& env = state.env;
  FeatureConfig fc;
  fc.lookahead = true;
  const int base = node_feature_width(fc, 3);
  const int w = feature_width(fc, 3);
  ASSERT_EQ(w, base + 3 * kLookaheadPerDevice);
  std::vector<float> x(20 * w);
  build_features(env, fc, x.data());
  std::vector<double> what_if;
  env.what_if_devices(&what_if);
  const double now = env.objective_us();
  const double lowest = *std::min_element(what_if.begin(), what_if.end());
  for (int v = 0; v < 20; ++v) {
    if (v == env.current_node()) continue;
    for (int k = base; k < w; ++k) EXPECT_EQ(x[v * w + k], 0.0f) << v;
  }
  const float* row = &x[env.current_node() * w + base];
  for (int d = 0; d < 3; ++d) {
    const float* f = row + d * kLookaheadPerDevice;
    EXPECT_NEAR(f[0], 10 * (what_if[d] - now) / now, 1e-5);
    EXPECT_NEAR(f[1], 10 * (what_if[d] - env.best_objective_us()) / now, 1e-5);
    EXPECT_GE(f[2], -1.0f);
    EXPECT_LE(f[2], 1.0f);
    EXPECT_EQ(f[3], what_if[d] == lowest ? 1.0f : 0.0f);
    EXPECT_EQ(f[4], env.placement().device[env.current_node()] == d ? 1.0f : 0.0f);
  }

  OneStep step(g, fc, x, env.current_node());
  torch::Tensor before = step.logits(step.x);
  torch::Tensor other = step.x.clone();
  other.index_put_({0, (env.current_node() + 1) % 20, base}, 5.0f);  // not the current row
  EXPECT_TRUE(torch::equal(step.logits(other), before));
  other = step.x.clone();
  other.index_put_({0, env.current_node(), base + kLookaheadPerDevice + 3}, 7.0f);
  torch::Tensor after = step.logits(other);
  EXPECT_FALSE(torch::allclose(after.select(1, 1), before.select(1, 1)));
  EXPECT_TRUE(torch::allclose(after.select(1, 0), before.select(1, 0)));  // device 0's own
}

// policy.memory_features: two more what-if columns per device after the five of lookahead
// (the move's headroom and overflow change, PlacementEnv::what_if_devices), read by the same
// device-shared head, which is one input wider; without it the widths are those of before.
TEST(Features, MemoryColumnsFollowTheLookaheadColumnsOfEachDevice) {
  Graph g = make_random_graph(20, 3);
  const Cluster c = with_balanced_capacity(default_cluster(3), g, 1.2);
  PlacementEnv env{g, c, EnvConfig{}};
  std::mt19937_64 rng(1);
  env.reset(rng);
  env.step(1);
  FeatureConfig plain;
  plain.lookahead = true;
  FeatureConfig fc = plain;
  fc.memory_features = true;
  EXPECT_EQ(lookahead_width_per_device(plain), kLookaheadPerDevice);
  EXPECT_EQ(lookahead_width_per_device(fc), kLookaheadPerDevice + kMemoryLookaheadPerDevice);
  const int base = node_feature_width(fc, 3);
  const int w = feature_width(fc, 3);
  ASSERT_EQ(w, feature_width(plain, 3) + 3 * kMemoryLookaheadPerDevice);
  std::vector<float> x(20 * w), y(20 * feature_width(plain, 3));
  build_features(env, fc, x.data());
  build_features(env, plain, y.data());
  std::vector<double> what_if;
  std::vector<WhatIfMemory> memory;
  env.what_if_devices(&what_if, &memory);
  const int k = lookahead_width_per_device(fc);
  const float* row = &x[env.current_node() * w + base];
  const float* plain_row = &y[env.current_node() * feature_width(plain, 3) + base];
  for (int d = 0; d < 3; ++d) {
    for (int j = 0; j < kLookaheadPerDevice; ++j)
      EXPECT_EQ(row[d * k + j], plain_row[d * kLookaheadPerDevice + j]) << d << " " << j;
    EXPECT_FLOAT_EQ(row[d * k + 5], static_cast<float>(memory[d].headroom));
    EXPECT_FLOAT_EQ(row[d * k + 6], static_cast<float>(memory[d].overflow_change));
  }
  OneStep step(g, fc, x, env.current_node());
  torch::Tensor before = step.logits(step.x);
  torch::Tensor other = step.x.clone();
  other.index_put_({0, env.current_node(), base + 2 * k + 5}, -1.0f);  // device 2's headroom
  torch::Tensor after = step.logits(other);
  EXPECT_FALSE(torch::allclose(after.select(1, 2), before.select(1, 2)));
  EXPECT_TRUE(torch::allclose(after.select(1, 0), before.select(1, 0)));
}

TEST(Policy, SameWeightsPlaceAnySizeAndRefuseOtherDeviceCounts) {
  torch::manual_seed(0);
  PolicyConfig pc;
  pc.num_devices = 3;
  PolicyNet net(pc);
  for (int n : {5, 40}) {
    Graph g = make_random_graph(n, 4);
    GraphTensors gt = make_graph_tensors(g, false);
    torch::Tensor x = torch::rand({2, n, net->feature_width()});
    torch::Tensor cur = torch::tensor({0, 1}, torch::kInt64);
    torch::Tensor logits = net->forward(x, cur, gt);
    EXPECT_EQ(logits.size(0), 2);
    EXPECT_EQ(logits.size(1), 3);
  }
  Graph g = make_random_graph(5, 4);
  GraphTensors gt = make_graph_tensors(g, false);
  torch::Tensor x4 = torch::rand({1, 5, 5 + 4});
  try {
    net->forward(x4, torch::tensor({0}, torch::kInt64), gt);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("trained for 3 devices"), std::string::npos);
  }
}

FeatureConfig any_device_features() {
  FeatureConfig fc;
  fc.lookahead = true;
  fc.memory_features = true;
  fc.any_devices = true;
  return fc;
}

// A 3-device any-device network with seeded weights.
PolicyNet any_device_net(uint64_t seed) {
  torch::manual_seed(seed);
  PolicyConfig pc;
  pc.num_devices = 3;
  pc.features = any_device_features();
  return PolicyNet(pc);
}

// One network with policy.any_devices places 2 to 16 devices and a heterogeneous cluster with
// the same weights; its node columns do not depend on D.
TEST(Policy, AnyDevicesNetworkPlacesEveryDeviceCountAndHeterogeneousClusters) {
  PolicyNet net = any_device_net(4);
  const FeatureConfig fc = any_device_features();
  const Graph g = make_random_graph(30, 8);
  const GraphTensors gt = make_graph_tensors(g, false);
  std::vector<Cluster> clusters;
  for (int d : {2, 3, 4, 8, 16}) clusters.push_back(default_cluster(d));
  clusters.push_back(
      load_cluster(std::string(PLACETO_SOURCE_DIR) + "/experiments/clusters/mixed_v100_k80.yaml"));
  clusters.push_back(with_balanced_capacity(default_cluster(4), g, 1.2));
  for (const Cluster& c : clusters) {
    SCOPED_TRACE(c.num_devices());
    EXPECT_TRUE(net->places(c.num_devices()));
    EXPECT_EQ(node_feature_width(fc, c.num_devices()), 6);
    PlacementEnv env(g, c, EnvConfig{});
    std::mt19937_64 rng(1);
    const EpisodeRecord rec = run_episode(net, gt, env, rng, ActionMode::kGreedy);
    EXPECT_EQ(rec.width, 6 + 11 * c.num_devices());
    EXPECT_EQ(rec.steps(), 30);
    for (int32_t d : rec.final_placement.device) EXPECT_LT(d, c.num_devices());
  }
  // A width that is not node columns plus whole devices is refused, naming both parts.
  try {
    net->forward(torch::rand({1, 30, 6 + 11 * 2 + 3}), torch::tensor({0}, torch::kInt64), gt);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("11 per device"), std::string::npos) << e.what();
  }
}

// Devices are described, not named: permuting the devices' columns permutes the logits.
TEST(Policy, AnyDevicesLogitsFollowTheDevicesColumnsNotTheirIndex) {
  TwoStepsIn s;
  const FeatureConfig fc = any_device_features();
  std::vector<float> features(static_cast<size_t>(s.g.num_nodes()) * feature_width(fc, 3));
  build_features(s.env, fc, features.data());
  OneStep step(s.g, fc, features, s.env.current_node());
  const torch::Tensor before = step.logits(step.x);
  const int64_t base = node_feature_width(fc, 3), k = lookahead_width_per_device(fc);
  torch::Tensor swapped = step.x.clone();
  const int64_t cur = s.env.current_node();
  swapped.index_put_({0, cur, torch::indexing::Slice(base, base + k)},
                     step.x.index({0, cur, torch::indexing::Slice(base + 2 * k, base + 3 * k)}));
  swapped.index_put_({0, cur, torch::indexing::Slice(base + 2 * k, base + 3 * k)},
                     step.x.index({0, cur, torch::indexing::Slice(base, base + k)}));
  const torch::Tensor after = step.logits(swapped);
  EXPECT_TRUE(torch::allclose(after[0][0], before[0][2]));
  EXPECT_TRUE(torch::allclose(after[0][2], before[0][0]));
  EXPECT_TRUE(torch::allclose(after[0][1], before[0][1]));
}

// The device columns: shares of the step's tensors and of the compute per device (each sums
// to 1), relative speed (1 on identical devices; the faster kind 1 on a mixed cluster) and
// headroom (1 without capacities).
TEST(Features, DeviceColumnsDescribeEachDevice) {
  const FeatureConfig fc = any_device_features();
  const int k = lookahead_width_per_device(fc);
  const int at = kLookaheadPerDevice + kMemoryLookaheadPerDevice;
  auto columns = [&](const Graph& g, const Cluster& c) {
    PlacementEnv env(g, c, EnvConfig{});
    std::mt19937_64 rng(2);
    env.reset(rng);
    env.step(0);
    const int w = feature_width(fc, c.num_devices());
    std::vector<float> f(static_cast<size_t>(g.num_nodes()) * w);
    build_features(env, fc, f.data());
    const float* row = f.data() + static_cast<size_t>(env.current_node()) * w +
                       node_feature_width(fc, c.num_devices());
    std::vector<std::array<float, kDevicePerDevice>> out(c.num_devices());
    for (int j = 0; j < c.num_devices(); ++j)
      for (int i = 0; i < kDevicePerDevice; ++i) out[j][i] = row[j * k + at + i];
    return out;
  };
  const Graph g = make_random_graph(25, 6);
  const auto plain = columns(g, default_cluster(4));
  float tensors = 0, compute = 0;
  for (const auto& d : plain) {
    tensors += d[0];
    compute += d[1];
    EXPECT_FLOAT_EQ(d[2], 1.0f);
    EXPECT_FLOAT_EQ(d[3], 1.0f);
  }
  EXPECT_NEAR(tensors, 1.0f, 1e-5);
  EXPECT_NEAR(compute, 1.0f, 1e-5);
  const auto mixed = columns(g, load_cluster(std::string(PLACETO_SOURCE_DIR) +
                                             "/experiments/clusters/mixed_v100_k80.yaml"));
  EXPECT_FLOAT_EQ(mixed[0][2], 1.0f);  // a V100
  EXPECT_LT(mixed[3][2], 0.5f);        // a K80, 3.6x slower
  const auto capped = columns(g, with_balanced_capacity(default_cluster(4), g, 1.2));
  for (const auto& d : capped) EXPECT_LT(d[3], 1.0f);
}

// Hierarchical placement: a graph above `above` ops is placed on at most `groups` groups and
// then refined at the group boundaries; the boundary pass never makes the memory rule's score
// worse and spends at most its simulations.
TEST(Policy, LargeGraphsArePlacedHierarchically) {
  PolicyNet net = any_device_net(5);
  const Graph g = make_random_graph(300, 12);
  const Cluster c = default_cluster(3);
  EnvConfig env;
  HierarchyOptions h;
  h.above = 100;
  h.groups = 24;
  h.boundary_sims = 0;
  const PolicyPlacement coarse_only = place_with_network(net, env, false, g, c, 1, 1, h);
  ASSERT_EQ(coarse_only.placement.device.size(), 300u);
  // Without the pass, the placement is constant on each group of coarsen(g, 24).
  const CoarseGraph cg = coarsen(g, 24);
  std::vector<int32_t> group_device(static_cast<size_t>(cg.graph.num_nodes()), -1);
  for (NodeId v = 0; v < 300; ++v) {
    int32_t& d = group_device[cg.group[v]];
    if (d < 0) d = coarse_only.placement.device[v];
    EXPECT_EQ(d, coarse_only.placement.device[v]) << v;
  }
  h.boundary_sims = 200;
  const PolicyPlacement refined = place_with_network(net, env, false, g, c, 1, 1, h);
  EXPECT_LE(refined.runtime_us, coarse_only.runtime_us);
  Simulator sim(g, c);
  EXPECT_DOUBLE_EQ(sim.simulate(refined.placement).runtime_us, refined.runtime_us);
  // Started from a placer, the whole graph is placed by it first and the coarsening keeps
  // its devices apart: with fine rewards the result is never slower than the placer's.
  EnvConfig from_metis;
  from_metis.start = parse_episode_start("placer:metis", "test");
  const PolicyPlacement refined_metis = place_with_network(net, from_metis, false, g, c, 1, 1, h);
  PlacerOptions po;
  po.seed = static_cast<int64_t>(from_metis.start_seed);
  const double metis_us = sim.simulate(make_placer("metis")->place(g, c, po)).runtime_us;
  EXPECT_LE(refined_metis.runtime_us, metis_us);
  // The pass alone, from a random placement, on a capped cluster.
  const Cluster capped = with_balanced_capacity(c, g, 1.1);
  Placement p(3, 300);
  std::mt19937_64 rng(9);
  for (auto& d : p.device) d = static_cast<int32_t>(rng() % 3);
  Simulator capped_sim(g, capped);
  capped_sim.set_compute_memory(true);
  const SimResult& r0 = capped_sim.simulate(p);
  const double before = memory_rule_score(memory_overflow(r0, capped), r0.runtime_us);
  const int kept = refine_group_boundaries(g, capped, cg.group, 50, &p);
  const SimResult& r1 = capped_sim.simulate(p);
  EXPECT_LE(memory_rule_score(memory_overflow(r1, capped), r1.runtime_us), before);
  EXPECT_GE(kept, 0);
  EXPECT_LE(kept, 50);
}

TEST(Policy, SweepVariantMatchesSequentialDefinition) {
  // The level-by-level sweep must equal h_v = T(x_v) + g(sum_parents f(h_u)) computed one
  // node at a time in topological order.
  torch::manual_seed(1);
  PolicyConfig pc;
  pc.num_devices = 2;
  pc.message_passing = MessagePassing::kSweep;
  PolicyNet net(pc);
  Graph g = make_random_graph(15, 9);
  GraphTensors gt = make_graph_tensors(g, true);
  torch::Tensor x = torch::rand({1, 15, net->feature_width()});
  // Run the module pieces by hand.
  auto mods = net->named_children();
  torch::nn::Linear tr = std::dynamic_pointer_cast<torch::nn::LinearImpl>(mods["node_transform"]);
  torch::nn::Linear f = std::dynamic_pointer_cast<torch::nn::LinearImpl>(mods["f_fwd"]);
  torch::nn::Linear gg = std::dynamic_pointer_cast<torch::nn::LinearImpl>(mods["g_fwd"]);
  torch::NoGradGuard ng;
  torch::Tensor h0 = torch::relu(tr(x))[0];
  std::vector<torch::Tensor> h(15);
  for (NodeId v : g.topo_order()) {
    torch::Tensor s = torch::zeros({pc.hidden});
    for (int i = g.parent_begin(v); i < g.parent_end(v); ++i)
      s = s + torch::relu(f(h[g.edge_src(g.parent_edges()[i])]));
    h[v] = h0[v] + torch::relu(gg(s));
  }
  torch::Tensor z = net->embed(x, gt)[0];
  for (NodeId v = 0; v < 15; ++v)
    EXPECT_TRUE(torch::allclose(z[v].slice(0, 0, pc.hidden), h[v], 1e-5, 1e-6)) << "node " << v;
}

TEST(Rollout, GreedyEpisodeIsDeterministicAndVisitsEveryNodeOnce) {
  torch::manual_seed(2);
  PolicyConfig pc;
  pc.num_devices = 2;
  PolicyNet net(pc);
  Graph g = make_random_graph(12, 5);
  Cluster c = default_cluster(2);
  GraphTensors gt = make_graph_tensors(g, false);
  PlacementEnv env(g, c, EnvConfig{});
  std::mt19937_64 r1(7), r2(7);
  EpisodeRecord a = run_episode(net, gt, env, r1, ActionMode::kSample);
  EpisodeRecord b = run_episode(net, gt, env, r2, ActionMode::kSample);
  EXPECT_EQ(a.actions, b.actions);
  EXPECT_EQ(a.steps(), 12);
  std::vector<int64_t> cur = a.current;
  std::sort(cur.begin(), cur.end());
  for (int i = 0; i < 12; ++i) EXPECT_EQ(cur[i], i);
  // Returns telescope: G_0 = (start - final) / start.
  EXPECT_NEAR(a.returns()[0], (a.start_runtime_us - a.final_runtime_us) / a.start_runtime_us,
              1e-12);
}

}  // namespace
}  // namespace placeto
