// The Metropolis engine (sim/placers/metropolis.h) with toy proposers: rejected proposals are
// undone completely, the best placement is never worse than the start and is what the stats
// say, the schedules and budgets end the run where they should.
#include "sim/placers/metropolis.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <vector>

#include "sim/cluster.h"
#include "sim/families/family.h"
#include "sim/simulator.h"

namespace placeto {
namespace {

Graph ptb_graph() {
  return generate_graph(resolve_family_spec(default_family_spec("ptb")), 0, 6262);
}

// Moves `ops` uniformly drawn ops (possibly the same op twice) to uniformly drawn devices,
// and checks in the hooks that the engine kept or undid the whole proposal.
class MultiMoveProposer : public Proposer {
 public:
  explicit MultiMoveProposer(int ops, int64_t stop_after = -1)
      : ops_(ops), stop_after_(stop_after) {}

  Proposal propose(MetropolisSearch& s) override {
    if (stop_after_ >= 0 && s.step() >= stop_after_) return Proposal::none();
    EXPECT_TRUE(s.undo().empty());
    before_ = s.current();
    temperatures.push_back(s.temperature());
    const int n = s.graph().num_nodes();
    const int d = s.cluster().num_devices();
    for (int k = 0; k < ops_; ++k) {
      const NodeId v = static_cast<NodeId>(s.rng().below(n));
      s.move(v, static_cast<int32_t>(s.rng().below(d)));
    }
    after_ = s.current();
    return Proposal::unscored();
  }
  void accepted(MetropolisSearch& s) override {
    ++accepted_calls;
    EXPECT_EQ(s.current(), after_);
  }
  void rejected(MetropolisSearch& s) override {
    ++rejected_calls;
    EXPECT_EQ(s.current(), before_);
    if (!(s.current() == before_)) ++undo_failures;
  }

  std::vector<double> temperatures;
  int64_t accepted_calls = 0, rejected_calls = 0, undo_failures = 0;

 private:
  int ops_;
  int64_t stop_after_;
  Placement before_, after_;
};

double score_of(const Graph& g, const Cluster& c, const Placement& p) {
  Simulator sim(g, c);
  return search_score(sim.simulate(p), c);
}

TEST(Metropolis, RejectedMultiOpProposalsAreUndoneAndBestIsNeverWorse) {
  const Graph g = ptb_graph();
  const Cluster c = resolve_cluster("", 3);
  Placement start(3, g.num_nodes());
  for (int v = 0; v < g.num_nodes(); ++v) start.device[v] = v % 3;
  const double s0 = score_of(g, c, start);
  MetropolisSearch search(g, c, 5);
  MetropolisOptions mo;
  mo.budget = 300;
  mo.t_start = 0.02 * s0;
  mo.t_end = 2e-5 * s0;
  MultiMoveProposer proposer(4);
  const Placement best = search.run(start, proposer, mo);
  const MetropolisStats& st = search.stats();
  EXPECT_EQ(st.steps, 300);
  EXPECT_EQ(st.simulations, 300);
  EXPECT_EQ(st.accepted, proposer.accepted_calls);
  EXPECT_EQ(st.steps, proposer.accepted_calls + proposer.rejected_calls);
  EXPECT_GT(proposer.rejected_calls, 0);
  EXPECT_EQ(proposer.undo_failures, 0);
  EXPECT_DOUBLE_EQ(st.start_score, s0);
  EXPECT_LE(st.best_score, s0);
  EXPECT_DOUBLE_EQ(score_of(g, c, best), st.best_score);
  // The geometric schedule: t_start at step 0, t_end at the last step of the budget.
  ASSERT_EQ(proposer.temperatures.size(), 300u);
  EXPECT_DOUBLE_EQ(proposer.temperatures.front(), mo.t_start);
  EXPECT_NEAR(proposer.temperatures.back(), mo.t_end, 1e-9 * mo.t_end);
}

TEST(Metropolis, SameSeedSameResult) {
  const Graph g = ptb_graph();
  const Cluster c = resolve_cluster("", 2);
  Placement start(2, g.num_nodes());
  MetropolisOptions mo;
  mo.budget = 200;
  mo.t_start = 100;
  mo.t_end = 0.1;
  MetropolisSearch a(g, c, 9), b(g, c, 9);
  MultiMoveProposer pa(2), pb(2);
  EXPECT_EQ(a.run(start, pa, mo), b.run(start, pb, mo));
  EXPECT_EQ(a.stats().accepted, b.stats().accepted);
}

// Proposes nothing new (the same placement) with a given score offset: the random stream is
// drawn only for a proposal that raises the score (anneal's order of draws depends on it).
class FixedDeltaProposer : public Proposer {
 public:
  explicit FixedDeltaProposer(double delta) : delta_(delta) {}
  Proposal propose(MetropolisSearch& s) override {
    return Proposal::with_score(s.current_score() + delta_);
  }

 private:
  double delta_;
};

TEST(Metropolis, RandomStreamIsDrawnOnlyWhenTheScoreRises) {
  const Graph g = ptb_graph();
  const Cluster c = resolve_cluster("", 2);
  Placement start(2, g.num_nodes());
  MetropolisOptions mo;
  mo.budget = 10;
  mo.t_start = mo.t_end = 1;
  for (double delta : {0.0, -1.0}) {
    MetropolisSearch search(g, c, 4);
    FixedDeltaProposer proposer(delta);
    search.run(start, proposer, mo);
    EXPECT_EQ(search.stats().accepted, 10);
    EXPECT_EQ(search.rng().engine()(), Rng(4).engine()()) << "delta " << delta;
  }
  MetropolisSearch search(g, c, 4);
  FixedDeltaProposer proposer(1e9);  // always rejected at temperature 1
  search.run(start, proposer, mo);
  EXPECT_EQ(search.stats().accepted, 0);
  Rng ten(4);
  for (int k = 0; k < 10; ++k) ten.uniform01();
  EXPECT_EQ(search.rng().engine()(), ten.engine()());
}

TEST(Metropolis, ExhaustedProposerEndsTheRun) {
  const Graph g = ptb_graph();
  const Cluster c = resolve_cluster("", 2);
  Placement start(2, g.num_nodes());
  MetropolisSearch search(g, c, 1);
  MetropolisOptions mo;
  mo.budget = 1000;
  MultiMoveProposer proposer(1, 7);
  search.run(start, proposer, mo);
  EXPECT_EQ(search.stats().steps, 7);
}

TEST(Metropolis, ByFractionSpentStopsAtTheSimulationBudget) {
  const Graph g = ptb_graph();
  const Cluster c = resolve_cluster("", 2);
  Placement start(2, g.num_nodes());
  MetropolisSearch search(g, c, 3);
  MetropolisOptions mo;
  mo.schedule = TemperatureSchedule::kByFractionSpent;
  mo.budget = 50;
  mo.t_start = 1000;
  mo.t_end = 1;
  MultiMoveProposer proposer(1);
  search.run(start, proposer, mo);
  EXPECT_EQ(search.stats().simulations, 50);
  ASSERT_EQ(proposer.temperatures.size(), 50u);
  EXPECT_DOUBLE_EQ(proposer.temperatures.front(), 1000);
  // Falling from t_start towards t_end: after k of 50 simulations, 1000 * 0.001^(k / 50).
  EXPECT_NEAR(proposer.temperatures[25], 1000 * std::pow(1e-3, 0.5), 1e-6);
}

TEST(Metropolis, TimeBudgetIsRespected) {
  const Graph g = ptb_graph();
  const Cluster c = resolve_cluster("", 4);
  Placement start(4, g.num_nodes());
  MetropolisSearch search(g, c, 2);
  MetropolisOptions mo;
  mo.schedule = TemperatureSchedule::kByFractionSpent;
  mo.budget = 0;
  mo.time_ms = 60;
  const auto t0 = std::chrono::steady_clock::now();
  mo.started = t0;
  MultiMoveProposer proposer(1);
  search.run(start, proposer, mo);
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_GE(ms, 60);
  EXPECT_LT(ms, 60 + 500);  // one step past the deadline at most, on a loaded machine
  EXPECT_GT(search.stats().steps, 0);
}

TEST(Metropolis, TimeLimitStopsAGeometricRun) {
  const Graph g = ptb_graph();
  const Cluster c = resolve_cluster("", 2);
  Placement start(2, g.num_nodes());
  MetropolisSearch search(g, c, 2);
  MetropolisOptions mo;
  mo.budget = 100000000;
  mo.time_limit_s = 0.05;
  MultiMoveProposer proposer(1);
  const auto t0 = std::chrono::steady_clock::now();
  search.run(start, proposer, mo);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(s, 2.0);
  EXPECT_EQ(search.stats().steps % 64, 0);  // checked every 64 steps
}

}  // namespace
}  // namespace placeto
