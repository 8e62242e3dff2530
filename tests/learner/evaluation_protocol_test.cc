// One way to judge a placement (issue #21): the evaluation protocol's "best classical" is the
// same in every place that reports it -- run_protocol (placeto compare and placeto eval), the
// trainer's periodic evaluation, and the "best" placer behind env.start: placer:best and
// anneal's start -- including on a cluster where memory makes some placements infeasible.
// Also the registry (one registration adds a method everywhere) and equal-time budgets.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>

#include "actors/environment.h"
#include "common/comm/inproc/inproc_communicator.h"
#include "common/error.h"
#include "learner/periodic_eval.h"
#include "sim/placers/protocol.h"
#include "sim/placers/registry.h"
#include "sim/random_graph.h"
#include "sim/simulator.h"

namespace placeto {
namespace {

// Three devices whose memory holds about 60% of what the whole graph needs on one device:
// `single` cannot fit, placements that spread the graph can.
Cluster tight_cluster(const Graph& g) {
  Cluster c = default_cluster(3);
  const PlacementEvaluation one = evaluate_placement(g, c, Placement(3, g.num_nodes(), 0));
  const double need = static_cast<double>(one.peak_mem_bytes_max + one.param_bytes[0]);
  for (auto& d : c.devices) d.memory_bytes = 0.6 * need;
  return c;
}

std::vector<NamedGraph> graphs() {
  std::vector<NamedGraph> out;
  for (int i = 0; i < 3; ++i)
    out.push_back({"g" + std::to_string(i), "", make_random_graph(50, 100 + i)});
  return out;
}

TEST(EvaluationProtocol, OneBestClassicalEverywhereWithInfeasiblePlacements) {
  const std::vector<NamedGraph> gs = graphs();
  TrainConfig cfg;
  cfg.devices = 3;
  cfg.seed = 5;
  int infeasible_rows = 0;
  for (const NamedGraph& ng : gs) {
    const Cluster c = tight_cluster(ng.graph);
    PlacerOptions po;
    po.seed = static_cast<int64_t>(cfg.seed);
    // placeto compare / placeto eval: the best-classical row of the protocol.
    ProtocolOptions opt;
    opt.placer = po;
    std::vector<MethodSpec> specs;
    for (const std::string& m : fast_placer_names()) specs.push_back({m, m});
    specs.push_back({"best-classical", "best"});
    const GraphResult r = run_protocol({ng}, c, specs, opt).at(0);
    const ProtocolRow& best_row = r.rows.back();
    ASSERT_EQ(best_row.label, "best-classical");
    for (const ProtocolRow& row : r.rows) {
      infeasible_rows += row.eval.feasible ? 0 : 1;
      // The rule: nothing beats the best-classical row (feasible first, then fastest).
      EXPECT_FALSE(better_placement(row.eval, best_row.eval)) << ng.name << " " << row.label;
    }
    EXPECT_TRUE(best_row.eval.feasible) << ng.name;
    EXPECT_DOUBLE_EQ(best_row.ratio_to_best_classical, 1.0);
    // The trainer's periodic evaluation.
    std::unique_ptr<Communicator> comm = make_single_rank_communicator();
    PeriodicEvaluator pe(cfg, {ng}, c, *comm);
    EXPECT_DOUBLE_EQ(pe.best_classical_us(0), best_row.eval.runtime_us) << ng.name;
    // The "best" placer: anneal's default start and env.start: placer:best.
    const Placement best = best_fast_placement(ng.graph, c, po);
    EXPECT_DOUBLE_EQ(evaluate_placement(ng.graph, c, best).runtime_us, best_row.eval.runtime_us);
    EXPECT_EQ(best.device, make_placer("best")->place(ng.graph, c, po).device);
    EnvConfig env;
    env.start = parse_episode_start("placer:best", "test");
    env.start_seed = cfg.seed;
    PlacementEnv e(ng.graph, c, env);
    EXPECT_DOUBLE_EQ(evaluate_placement(ng.graph, c, e.fixed_start()).runtime_us,
                     best_row.eval.runtime_us);
  }
  // Memory really made some placements infeasible (single at least), or this proves little.
  EXPECT_GE(infeasible_rows, 3);
}

TEST(EvaluationProtocol, WithNothingFeasibleTheFastestInfeasiblePlacementIsTheReference) {
  const Graph g = make_random_graph(40, 7);
  Cluster c = default_cluster(2);
  for (auto& d : c.devices) d.memory_bytes = 1000;
  const ClassicalReference ref = classical_reference(g, c, PlacerOptions{});
  ASSERT_FALSE(ref.best_run().evaluation.feasible);
  for (const PlacerRun& run : ref.runs) {
    EXPECT_FALSE(run.evaluation.feasible);
    EXPECT_GE(run.evaluation.runtime_us, ref.best_run().evaluation.runtime_us) << run.method;
  }
  // Ties go to the earlier method in the registry.
  for (size_t i = 0; i < static_cast<size_t>(ref.best); ++i)
    EXPECT_GT(ref.runs[i].evaluation.runtime_us, ref.best_run().evaluation.runtime_us);
}

// A toy search: `single`'s placement, then every op on the last device if that is faster.
class LastDevicePlacer : public Placer {
 public:
  std::string name() const override { return "toy-last-device"; }
  Placement place(const Graph& g, const Cluster& c, const PlacerOptions&) const override {
    return Placement(c.num_devices(), g.num_nodes(), c.num_devices() - 1);
  }
};

TEST(PlacerRegistry, OneRegistrationAddsAMethodEverywhere) {
  PlacerInfo info;
  info.name = "toy-last-device";
  info.summary = "every op on the last device";
  info.kind = PlacerKind::kSearch;
  info.make = [](const PlacerOptions&) { return std::make_unique<LastDevicePlacer>(); };
  register_placer(info);
  EXPECT_THROW(register_placer(info), std::logic_error);
  EXPECT_NE(placer_help().find("toy-last-device"), std::string::npos);
  EXPECT_EQ(placer_names().back(), "toy-last-device");  // compare's default methods
  try {
    make_placer("toy-last-devic");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("did you mean 'toy-last-device'"), std::string::npos);
  }
  const std::vector<NamedGraph> gs = graphs();
  const auto results =
      run_protocol(gs, default_cluster(2), {{"toy", "toy-last-device"}}, ProtocolOptions{});
  ASSERT_EQ(results.size(), gs.size());
  for (const GraphResult& r : results) {
    ASSERT_EQ(r.rows.size(), 1u);
    EXPECT_EQ(r.rows[0].placement.device,
              std::vector<int32_t>(r.rows[0].placement.device.size(), 1));
    EXPECT_GT(r.rows[0].ratio_to_single, 0);
  }
  // The kinds that are not fast do not change what "best classical" is.
  EXPECT_EQ(fast_placer_names().size(), 10u);
}

TEST(PlacerRegistry, OptionsAreCheckedAgainstWhatAMethodTakes) {
  PlacerOptions o;
  o.checkpoint = "ckpt.h5";
  EXPECT_THROW(make_placer("heft", o), InputError);
  o = PlacerOptions{};
  o.budget = 10;
  o.time_ms = 5;
  EXPECT_THROW(make_placer("anneal", o), InputError);
  EXPECT_TRUE(placer_info("anneal").takes_start);
  EXPECT_FALSE(placer_info("metis").takes_start);
}

// Given time_ms, anneal cools by the time spent and ends when time_ms has passed, with no
// budget of steps (stats.budget 0): its schedule completes whatever a simulation costs.  More
// time, more simulations; never worse than its start.
TEST(EqualTime, AnnealCoolsByTheTimeAndEndsAtIt) {
  const Graph g = make_random_graph(80, 3);
  const Cluster c = default_cluster(3);
  PlacerStats small, large;
  PlacerOptions o;
  const auto timed = [&](double ms, PlacerStats* stats) {
    o.time_ms = ms;
    o.stats = stats;
    const auto t0 = std::chrono::steady_clock::now();
    Placement p = make_placer("anneal")->place(g, c, o);
    const double took =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_GE(took, ms) << stats->simulations << " simulations";  // ends on the clock
    EXPECT_EQ(stats->budget, 0);
    return p;
  };
  const Placement a = timed(20, &small);
  const Placement b = timed(400, &large);
  EXPECT_GE(large.simulations, 1);
  EXPECT_GT(large.simulations, small.simulations);  // 20x the time
  Simulator sim(g, c);
  const double start = sim.simulate(best_fast_placement(g, c, PlacerOptions{})).runtime_us;
  EXPECT_LE(sim.simulate(b).runtime_us, start);
  (void)a;
}

}  // namespace
}  // namespace placeto
