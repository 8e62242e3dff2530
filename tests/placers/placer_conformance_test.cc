// The conformance suite every placer passes: each op on a valid device, the same seed gives
// the same placement, capacities are respected whenever a feasible placement exists, and the
// reported evaluation is the simulator's and never beats the lower bound.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <functional>
#include <map>

#include "common/checkpoint/checkpoint_file.h"
#include "common/error.h"
#include "improve/search_placers.h"
#include "improve/what_if.h"
#include "sim/placers/evaluation.h"
#include "sim/placers/registry.h"
#include "sim/simulator.h"
#include "tests/placers/placer_test_graphs.h"
#include "tests/placers/random_dag.h"

namespace placeto {
namespace {

struct Case {
  Graph graph;
  Cluster cluster;
  // Whether a placement within capacity exists that every placer but `single` must find.
  bool tight_memory = false;
};

// A random DAG with parameters on a cluster whose per-device capacity is 60% of what the
// whole graph needs on one device: single cannot fit, spreading the graph can.
Case memory_case() {
  testing::RandomDagOptions o;
  o.num_ops = 60;
  o.width = 6;
  o.param_fraction = 0.5;
  Case k{testing::random_layered_dag(o, 11, "params_dag"), default_cluster(4), true};
  Simulator sim(k.graph, k.cluster);
  const SimResult& r = sim.simulate(Placement(4, k.graph.num_nodes(), 0));
  const double need = static_cast<double>(r.peak_mem_bytes[0] + r.param_bytes[0]);
  k.cluster = testing::cluster_with_memory(4, 0.6 * need);
  return k;
}

const std::map<std::string, std::function<Case()>>& cases() {
  static const std::map<std::string, std::function<Case()>> all = {
      {"chain",
       [] {
         return Case{testing::chain_graph(12, 100, 4096), default_cluster(3)};
       }},
      {"fork_join",
       [] {
         return Case{testing::fork_join_graph(6, 500, 1 << 20), default_cluster(4)};
       }},
      {"random60",
       [] {
         testing::RandomDagOptions o;
         o.num_ops = 60;
         return Case{testing::random_layered_dag(o, 1), default_cluster(2)};
       }},
      {"random150",
       [] {
         testing::RandomDagOptions o;
         o.num_ops = 150;
         o.width = 12;
         return Case{testing::random_layered_dag(o, 2), default_cluster(4)};
       }},
      {"no_edges",
       [] {
         return Case{testing::parallel_chains_graph(10, 1, 100, 8), default_cluster(3)};
       }},
      {"one_device",
       [] {
         return Case{testing::fork_join_graph(3, 50, 100), default_cluster(1)};
       }},
      {"memory", memory_case},
  };
  return all;
}

using Param = std::tuple<std::string, std::string>;  // placer, case

// The learned search's placers run on a scorer with random weights: the contract does not
// depend on what the network learned.
const std::string& learned_search_checkpoint() {
  // ctest runs every test case as its own process, in parallel: one file per process,
  // removed when the process ends.
  struct File {
    std::string path;
    ~File() {
      std::remove(path.c_str());
      std::remove((path + ".sha256").c_str());
    }
  };
  static const File file = [] {
    register_learned_search_placers();
    MoveScorer s(ScorerShape{WhatIf::kNumFeatures, 8, 4});
    s.init(5);
    CheckpointData d;
    s.to_checkpoint(&d);
    File f{::testing::TempDir() + "/conformance_scorer_" + std::to_string(::getpid()) + ".h5"};
    write_checkpoint_file(f.path, d);
    return f;
  }();
  return file.path;
}

class PlacerConformance : public ::testing::TestWithParam<Param> {
 protected:
  PlacerOptions options(int64_t seed) const {
    PlacerOptions o;
    o.seed = seed;
    o.budget = 300;  // anneal: keep the suite to seconds
    const std::string& method = std::get<0>(GetParam());
    if (method == "policy-search" || method == "auto") o.checkpoint = learned_search_checkpoint();
    return o;
  }
};

TEST_P(PlacerConformance, PlacesEveryOpOnAValidDeviceAndReportsTheSimulatorsNumbers) {
  const auto& [method, case_name] = GetParam();
  const Case k = cases().at(case_name)();
  auto placer = make_placer(method, options(3));
  EXPECT_EQ(placer->name(), method);
  const PlacerRun run = run_placer(*placer, k.graph, k.cluster, options(3));
  ASSERT_EQ(run.placement.num_devices, k.cluster.num_devices());
  ASSERT_EQ(static_cast<int>(run.placement.device.size()), k.graph.num_nodes());
  for (int32_t d : run.placement.device) {
    EXPECT_GE(d, 0);
    EXPECT_LT(d, k.cluster.num_devices());
  }
  Simulator sim(k.graph, k.cluster);
  const SimResult& r = sim.simulate(run.placement);
  EXPECT_EQ(run.evaluation.runtime_us, r.runtime_us);
  EXPECT_EQ(run.evaluation.feasible, r.memory_ok);
  EXPECT_EQ(run.evaluation.peak_mem_bytes_max, r.max_peak_mem_bytes());
  // The bound leaves out gaps and transfers, so no placement can beat it.
  EXPECT_GE(run.evaluation.runtime_us, run.evaluation.lower_bound_us);
  EXPECT_GE(run.evaluation.ratio_to_lb, 1.0);
  EXPECT_GE(run.place_ms, 0.0);
}

TEST_P(PlacerConformance, SameSeedGivesSamePlacement) {
  const auto& [method, case_name] = GetParam();
  const Case k = cases().at(case_name)();
  const Placement a = make_placer(method, options(7))->place(k.graph, k.cluster, options(7));
  const Placement b = make_placer(method, options(7))->place(k.graph, k.cluster, options(7));
  EXPECT_TRUE(a == b);
}

TEST_P(PlacerConformance, RespectsCapacityWhenAFeasiblePlacementExists) {
  const auto& [method, case_name] = GetParam();
  const Case k = cases().at(case_name)();
  const PlacerRun run =
      run_placer(*make_placer(method, options(5)), k.graph, k.cluster, options(5));
  if (method == "single" && k.tight_memory) {
    // By construction nothing fits on one device: the placer must say so, not pretend.
    EXPECT_FALSE(run.evaluation.feasible);
    EXPECT_NE(run.message.find("no feasible placement found"), std::string::npos) << run.message;
    EXPECT_NE(run.message.find("over capacity"), std::string::npos) << run.message;
  } else {
    EXPECT_TRUE(run.evaluation.feasible) << run.message;
    EXPECT_TRUE(run.message.empty());
  }
}

std::vector<std::string> case_names() {
  std::vector<std::string> names;
  for (const auto& [name, make] : cases()) names.push_back(name);
  return names;
}

std::string param_name(const ::testing::TestParamInfo<Param>& info) {
  std::string s = std::get<0>(info.param) + "_" + std::get<1>(info.param);
  for (char& ch : s)
    if (ch == '-') ch = '_';
  return s;
}

INSTANTIATE_TEST_SUITE_P(AllPlacers, PlacerConformance,
                         ::testing::Combine(::testing::ValuesIn(placer_names()),
                                            ::testing::ValuesIn(case_names())),
                         param_name);

INSTANTIATE_TEST_SUITE_P(LearnedSearch, PlacerConformance,
                         ::testing::Combine(::testing::Values("policy-search", "auto"),
                                            ::testing::ValuesIn(case_names())),
                         param_name);

TEST(PlacerRegistry, FastPlacersAreAllButTheSearches) {
  const auto& fast = fast_placer_names();
  const std::vector<std::string> searches = {"anneal", "slack-anneal", "chain-anneal", "descent"};
  // The learned searches (policy-search, auto) take a checkpoint: not classical.
  std::vector<std::string> classical_searches;
  for (const std::string& s : placer_names_of(PlacerKind::kSearch)) {
    const PlacerInfo& info = placer_info(s);
    if (!info.needs_checkpoint && !info.accepts_checkpoint) classical_searches.push_back(s);
  }
  EXPECT_EQ(classical_searches, searches);
  EXPECT_EQ(fast.size() + searches.size(), placer_names().size());
  for (const std::string& s : searches)
    EXPECT_EQ(std::find(fast.begin(), fast.end(), s), fast.end());
}

TEST(PlacerRegistry, UnknownNameSuggestsTheClosest) {
  try {
    make_placer("hfet");
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("unknown placement method 'hfet'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("did you mean 'heft'"), std::string::npos) << msg;
  }
}

TEST(PlacerRegistry, DifferentSeedsGiveDifferentRandomPlacements) {
  testing::RandomDagOptions o;
  o.num_ops = 80;
  const Graph g = testing::random_layered_dag(o, 4);
  const Cluster c = default_cluster(4);
  PlacerOptions a, b;
  a.seed = 1;
  b.seed = 2;
  auto placer = make_placer("random");
  EXPECT_FALSE(placer->place(g, c, a) == placer->place(g, c, b));
}

}  // namespace
}  // namespace placeto
