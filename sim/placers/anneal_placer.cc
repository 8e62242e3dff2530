// Simulated annealing over single-op moves, scored by the simulator: the slow "best-known"
// reference that learned policies are compared with.  Not one of the fast placers.  The
// Metropolis loop itself (schedule, acceptance, undo, best so far) is the engine of
// metropolis.h; this file holds the proposals of anneal, slack-anneal and chain-anneal.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <vector>

#include "common/error.h"
#include "sim/coarsen.h"
#include "sim/placers/memory.h"
#include "sim/placers/methods.h"
#include "sim/placers/metropolis.h"
#include "sim/placers/registry.h"
#include "sim/placers/search_util.h"
#include "sim/simulator.h"

namespace placeto {
namespace {

constexpr int64_t kDefaultBudget = 2000;
// The starting temperature as a fraction of the start's score (options.anneal_t_start
// overrides it) and at the end of the schedule.
constexpr double kStartTemperature = 0.02;
constexpr double kEndTemperature = 2e-5;

// slack-anneal: op draws follow criticality.  An op's slack is how long it could finish later
// without lengthening the step, estimated from the last simulation of the current placement:
// makespan - (its end + the longest chain of op costs after it).  Draw weights are
// 1 / (1 + slack / (5% of the makespan)), mixed with a uniform draw (a fifth of the mass), and
// refreshed every kRefresh steps (one extra simulation each, which a timed run pays in time).
constexpr int kRefresh = 32;
constexpr double kUniformShare = 0.2;

// Longest chain of op costs that follows each op (its own cost excluded).
std::vector<double> tails(const Graph& g) {
  const int n = g.num_nodes();
  std::vector<double> bottom(n, 0), tail(n, 0);
  const auto& order = g.topo_order();
  const auto& ce = g.child_edges();
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const NodeId v = *it;
    double longest = 0;
    for (int k = g.child_begin(v); k < g.child_begin(v) + g.out_degree(v); ++k)
      longest = std::max(longest, bottom[g.edge_dst(ce[k])]);
    tail[v] = longest;
    bottom[v] = g.cost_us(v) + longest;
  }
  return tail;
}

// Cumulative draw weights of the ops from the simulator's last schedule.
void criticality_weights(const Simulator& sim, const std::vector<double>& tail,
                         std::vector<double>* cumulative) {
  const std::vector<double>& end = sim.end_us();
  const int n = static_cast<int>(end.size());
  const double makespan = sim.last_result().runtime_us;
  const double scale = std::max(1e-9, 0.05 * makespan);
  std::vector<double> w(n);
  double total = 0;
  for (int v = 0; v < n; ++v) {
    const double slack = std::max(0.0, makespan - end[v] - tail[v]);
    w[v] = 1.0 / (1.0 + slack / scale);
    total += w[v];
  }
  cumulative->resize(n);
  double acc = 0;
  for (int v = 0; v < n; ++v) {
    acc += kUniformShare / n + (1.0 - kUniformShare) * w[v] / total;
    (*cumulative)[v] = acc;
  }
}

// chain-anneal: the share of moves that move a segment of a forward chain (coarsen.h
// forward_chains) instead of one op.  Picked on Inception-V3 and GoogLeNet under memory
// pressure with tuning seeds 11-13 (experiments/RESULTS.md §12): at 1 s, 0.3, 0.6 and 0.8
// gave 0.943, 0.934 and 0.931 of anneal's step, at 3 s 0.6 and 0.8 gave 0.961 and 0.970;
// 0.6 also leaves more single-op moves for graphs without long chains.
constexpr double kChainShare = 0.6;

NodeId draw_weighted(const std::vector<double>& cumulative, PlacerRng& rng) {
  const double u = rng.uniform01() * cumulative.back();
  const auto it = std::upper_bound(cumulative.begin(), cumulative.end(), u);
  return static_cast<NodeId>(
      std::min<ptrdiff_t>(it - cumulative.begin(), static_cast<ptrdiff_t>(cumulative.size()) - 1));
}

// What differs between anneal, slack-anneal and chain-anneal: how a move is drawn.
enum class Moves { kUniform, kSlackWeighted, kChains };

// Single-op, group and chain-segment moves for the engine (metropolis.h): anneal's proposals,
// with the op drawn uniformly or (slack-anneal) by criticality.
class AnnealProposer : public Proposer {
 public:
  AnnealProposer(const Graph& g, const PlacerOptions& o, Moves moves)
      : g_(g), o_(o), slack_weighted_(moves == Moves::kSlackWeighted) {
    if (moves == Moves::kChains) chains_ = forward_chains(g);
    const int n = g.num_nodes();
    if (!o.move_groups.empty()) {
      if (static_cast<int>(o.move_groups.size()) != n)
        throw InputError("anneal: move_groups has " + std::to_string(o.move_groups.size()) +
                         " entries, but graph '" + g.name() + "' has " + std::to_string(n) +
                         " ops");
      GroupMembers groups = group_members(o.move_groups);
      members_ = std::move(groups.members);
      group_index_ = std::move(groups.index);
    }
    if (slack_weighted_) tail_ = tails(g);
  }

  Proposal propose(MetropolisSearch& s) override {
    const int n = g_.num_nodes();
    const int num_dev = s.cluster().num_devices();
    PlacerRng& rng = s.rng();
    Placement& current = s.current();
    if (slack_weighted_ && s.step() % kRefresh == 0) {
      s.simulate(current);  // the schedule of the current placement
      criticality_weights(s.simulator(), tail_, &cumulative_);
    }
    const NodeId v =
        slack_weighted_ ? draw_weighted(cumulative_, rng) : static_cast<NodeId>(rng.below(n));
    const int old = current.device[v];
    // Chain moves would split tied groups: with move_groups_only every move is a group move.
    if (!chains_.chains.empty() && !o_.move_groups_only && rng.uniform01() < kChainShare) {
      // A chain-segment move: 1 to len groups of v's chain, drawn uniformly, ending or (half
      // of the time) starting at v's group, with all their ops, to one device.
      const auto& chain = chains_.chains[chains_.chain[v]];
      const int len = static_cast<int>(chain.size());
      const int at = chains_.position[v];
      const int l = 1 + static_cast<int>(rng.below(len));
      int lo = at, hi = at + l;
      if (rng.uniform01() < 0.5) {
        lo = at - l + 1;
        hi = at + 1;
      }
      const int target = neighbour_or_other(s, v, old);
      for (int i = std::max(lo, 0); i < std::min(hi, len); ++i)
        for (NodeId u : chain[i]) s.move(u, target);
    } else if (!members_.empty() && (o_.move_groups_only || rng.uniform01() < 0.5)) {
      // A group move: v's whole group to one uniformly drawn other device.
      int target = static_cast<int>(rng.below(num_dev - 1));
      if (target >= old) ++target;
      for (NodeId u : members_[group_index_[v]]) s.move(u, target);
    } else {
      s.move(v, neighbour_or_other(s, v, old));
    }
    return Proposal::unscored();  // the engine simulates it
  }

 private:
  // Half of the time the device of one of v's neighbours (drawn uniformly among its edges),
  // which is how transfers disappear; otherwise, or when that is v's own device `old`, a
  // uniformly drawn other device.
  int neighbour_or_other(MetropolisSearch& s, NodeId v, int old) const {
    PlacerRng& rng = s.rng();
    int target = -1;
    const int degree = g_.in_degree(v) + g_.out_degree(v);
    if (degree > 0 && rng.uniform01() < 0.5) {
      const int k = static_cast<int>(rng.below(degree));
      const NodeId u = k < g_.in_degree(v)
                           ? g_.edge_src(g_.parent_edges()[g_.parent_begin(v) + k])
                           : g_.edge_dst(g_.child_edges()[g_.child_begin(v) + k - g_.in_degree(v)]);
      target = s.current().device[u];
    }
    if (target < 0 || target == old) {
      target = static_cast<int>(rng.below(s.cluster().num_devices() - 1));
      if (target >= old) ++target;
    }
    return target;
  }

  const Graph& g_;
  const PlacerOptions& o_;
  bool slack_weighted_;
  ForwardChains chains_;  // chain-anneal only
  // Group moves (options.move_groups): the members of each group, and each op's group.
  std::vector<std::vector<NodeId>> members_;
  std::vector<int> group_index_;
  // slack-anneal: tails() of the graph and the cumulative draw weights of the latest refresh.
  std::vector<double> tail_, cumulative_;
};

class AnnealPlacer : public Placer {
 public:
  explicit AnnealPlacer(Moves moves) : moves_(moves) {}
  std::string name() const override {
    switch (moves_) {
      case Moves::kSlackWeighted:
        return "slack-anneal";
      case Moves::kChains:
        return "chain-anneal";
      case Moves::kUniform:
        break;
    }
    return "anneal";
  }

  // Start: options.initial, or else the best (feasible first, then fastest) of the fast
  // placers run with the same seed.  Each step moves one op to another device -- half the
  // time to the device of one of its neighbours, which is how transfers disappear, otherwise
  // to a uniformly drawn one -- and is kept by the Metropolis rule on the score (the memory
  // rule's search_score: feasible first, then the step); the engine (metropolis.h) runs the
  // steps.  The temperature falls geometrically, per step, from 2% (options.anneal_t_start
  // when given) to 0.002% of the starting score over the budget.  The best placement seen is
  // returned, so the result is never worse than the start.
  //
  // With options.move_groups, half of the steps (every step with move_groups_only) move a
  // drawn op's whole group to a uniformly drawn other device instead: an op with its
  // gradient and update ops (training_op_groups), or the groups of a coarsening, so that
  // the search runs over placements of the coarse graph scored on the ops themselves.
  //
  // With options.time_ms the temperature falls with the fraction spent of the time left after
  // the start placement (kByFractionSpent): from 2% of the start's score when the search
  // begins to 0.002% at time_ms after the call began, where the run ends.  Until 2c48ced
  // a timed call sized a budget of steps from the cost of the first simulations (budget_for_time)
  // and cooled per step over it; on graphs whose simulations grow slower as ops spread over the
  // devices (ptb and nmt at 8 and 16 devices: about twice) the call reached time_ms halfway down
  // that schedule and stopped while still hot.
  //
  // slack-anneal (slack_weighted_) differs in one thing: the op to move is drawn by its
  // criticality in the current placement's schedule (see criticality_weights) instead of
  // uniformly -- the non-learned control that a learned proposal distribution must beat.
  //
  // chain-anneal (Moves::kChains) differs in one thing: 60% of the steps (kChainShare) move
  // a contiguous segment of the drawn op's forward chain (forward_chains: a layer stack, a
  // branch), every op of it with its gradient and update ops, to one device (a neighbour's
  // half of the time).  Where memory binds, a single-op move rarely fits, while moving a
  // segment shifts a split point between two devices in one step.
  Placement place(const Graph& g, const Cluster& c, const PlacerOptions& o) const override {
    const auto t_call = std::chrono::steady_clock::now();
    MetropolisSearch search(g, c, static_cast<uint64_t>(o.seed));
    const std::string method = name();
    Placement start = search_start(g, c, o, method.c_str());
    MetropolisOptions mo;
    const double start_score = mo.score(search.simulator().simulate(start), c);
    reset_stats_keeping_note(o.stats);
    if (c.num_devices() == 1 || g.num_nodes() == 0) return start;

    // Timed: no budget (0 in the stats); the schedule runs on the clock.
    const int64_t budget = o.time_ms > 0 ? 0 : o.budget > 0 ? o.budget : kDefaultBudget;
    mo.schedule = TemperatureSchedule::kGeometricPerStep;
    mo.budget = budget;
    mo.t_start = (o.anneal_t_start > 0 ? o.anneal_t_start : kStartTemperature) * start_score;
    mo.t_end = kEndTemperature * start_score;
    mo.time_limit_s = o.time_limit_s;
    if (o.time_ms > 0) {
      // The schedule starts when the search does: the start placement's time (the fast
      // placers, on a large graph a real share of T) is taken from T, not from the hot part.
      mo.started = std::chrono::steady_clock::now();
      const double left = o.time_ms - ms_since(t_call);
      if (left <= 0) return start;
      mo.schedule = TemperatureSchedule::kByFractionSpent;
      mo.time_ms = left;
    }
    AnnealProposer proposer(g, o, moves_);
    Placement best = search.run(start, proposer, mo);
    if (o.stats) {
      o.stats->budget = budget;
      o.stats->simulations = search.stats().simulations;
    }
    return best;
  }

 private:
  Moves moves_;
};

}  // namespace

std::unique_ptr<Placer> make_anneal_placer() {
  return std::make_unique<AnnealPlacer>(Moves::kUniform);
}
std::unique_ptr<Placer> make_slack_anneal_placer() {
  return std::make_unique<AnnealPlacer>(Moves::kSlackWeighted);
}
std::unique_ptr<Placer> make_chain_anneal_placer() {
  return std::make_unique<AnnealPlacer>(Moves::kChains);
}

}  // namespace placeto
