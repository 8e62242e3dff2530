// The one Metropolis engine of the project: anneal and slack-anneal (anneal_placer.cc) and
// the learned search (improve/learned_search.cc) are proposers on it.  The engine owns the
// state -- the current placement, its score, the best placement seen, the simulator and the
// random stream -- and the rules every search shares: the temperature schedule, the budget,
// the acceptance test, undo on rejection and the stats.  A proposer only says what to change.
//
// One step:
//  1. the proposer changes the current placement in place, recording every (op, device
//     before) it changes in the engine's undo list (MetropolisSearch::move does both), so a
//     proposal may move several ops at once; it may report the score of the proposed state
//     when it has simulated it already, or say that it has nothing more to propose;
//  2. the engine scores the proposed state (one simulation, unless the proposer reported it);
//  3. delta = proposed - current score; the proposal is accepted if delta <= 0, otherwise if
//     rng.uniform01() < exp(-delta / T) -- the random stream is drawn only when delta > 0;
//  4. rejected: the undo list is replayed backwards.  Accepted: a new best is kept;
//  5. the proposer hears which it was (accepted / rejected).
// The result is the best placement seen, the start included: never worse than the start.
//
// Not thread-safe: one engine per thread.  run() may be called again (a fresh search).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <utility>
#include <vector>

#include "common/rng.h"
#include "sim/placers/placer.h"
#include "sim/placers/search_util.h"
#include "sim/simulator.h"

namespace placeto {

// What a search minimises: search_score() unless a search says otherwise.
using SearchScoreFn = std::function<double(const SimResult&, const Cluster&)>;

// (op, device before the change), in the order the changes were made.
using UndoList = std::vector<std::pair<NodeId, int32_t>>;

enum class TemperatureSchedule {
  // temperature *= cooling after every step, cooling = (t_end / t_start)^(1 / (budget - 1)):
  // t_start at step 0, t_end at the last step of the budget (anneal's).  Needs budget > 0.
  kGeometricPerStep,
  // t_start * (t_end / t_start)^spent, spent = elapsed / time_ms when time_ms > 0, else
  // simulations / budget (the learned search's).  The run ends when spent reaches 1.
  kByFractionSpent,
};

struct MetropolisOptions {
  TemperatureSchedule schedule = TemperatureSchedule::kGeometricPerStep;
  // kGeometricPerStep: steps (proposals).  kByFractionSpent: simulations, the proposer's
  // included (stats.simulations), so a proposer that simulates a batch per step pays for it.
  int64_t budget = 2000;
  // > 0: the run also ends after this many milliseconds since `started` (measured in this
  // process), and kByFractionSpent cools by the time spent instead of the simulations.
  double time_ms = 0;
  std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
  // Absolute temperatures, in score units (callers scale them by the start's score).
  double t_start = 1, t_end = 1e-3;
  // > 0: a hard cap in seconds since run() began, checked every 64 steps (anneal's
  // time_limit_s: the result then depends on the machine's speed).
  double time_limit_s = 0;
  SearchScoreFn score = search_score;
  // When set, the start's score by `score`, known to the caller: run() does not simulate the
  // start again.  The caller's latest simulation on simulator() must then be the start's
  // (Proposer::begin relies on it).
  std::optional<double> start_score;
};

struct MetropolisStats {
  int64_t steps = 0;        // proposals made
  int64_t simulations = 0;  // the engine's and the proposer's, the start's excluded
  int64_t accepted = 0;
  double start_score = 0, best_score = 0;
};

// What a proposer did in one step.
struct Proposal {
  bool made = false;    // false: nothing to propose (the proposer is exhausted); the run ends
  bool scored = false;  // the proposer simulated the proposed state; `score` is its score
  double score = 0;

  static Proposal none() { return {}; }
  static Proposal unscored() { return {true, false, 0}; }
  static Proposal with_score(double s) { return {true, true, s}; }
};

class MetropolisSearch;

// Proposes changes of the current placement (MetropolisSearch::current).  Every change goes
// through MetropolisSearch::move (or is recorded in MetropolisSearch::undo before it is
// made), so that a rejection can undo it.
class Proposer {
 public:
  virtual ~Proposer() = default;
  // Before the first step; the simulator's latest simulation is the start placement's.
  virtual void begin(MetropolisSearch&) {}
  virtual Proposal propose(MetropolisSearch& search) = 0;
  // After the engine's decision on the latest proposal (after its undo, on rejection).
  virtual void accepted(MetropolisSearch&) {}
  virtual void rejected(MetropolisSearch&) {}
};

class MetropolisSearch {
 public:
  MetropolisSearch(const Graph& graph, const Cluster& cluster, uint64_t seed);

  // Simulates `start` (not counted in the stats; see options.start_score), then runs steps until
  // the budget, time or time limit is spent or the proposer is exhausted.  Returns the best
  // placement seen. REQUIRES: start is a valid placement for the graph and cluster.
  Placement run(const Placement& start, Proposer& proposer, const MetropolisOptions& options);

  // For proposers (and for callers before run(): the simulator, e.g. to size a budget).
  const Graph& graph() const { return graph_; }
  const Cluster& cluster() const { return cluster_; }
  Simulator& simulator() { return sim_; }
  PlacerRng& rng() { return rng_; }
  Placement& current() { return current_; }
  double current_score() const { return current_score_; }
  double temperature() const { return temperature_; }
  int64_t step() const { return step_; }  // 0-based index of the step being proposed
  UndoList& undo() { return undo_; }      // empty when propose() is called
  // Records (op, its device) in the undo list, then moves the op.
  void move(NodeId op, int32_t device) {
    undo_.emplace_back(op, current_.device[op]);
    current_.device[op] = device;
  }
  // Simulates `p` and returns its score; counted in stats().simulations.
  double simulate(const Placement& p) {
    ++stats_.simulations;
    return options_.score(sim_.simulate(p), cluster_);
  }
  // Whether the budget or time is spent (a proposer that loops over candidates stops then).
  bool spent() const;
  const MetropolisStats& stats() const { return stats_; }

 private:
  double fraction_spent() const;

  const Graph& graph_;
  const Cluster& cluster_;
  Simulator sim_;
  PlacerRng rng_;
  MetropolisOptions options_;
  Placement current_;
  double current_score_ = 0;
  double temperature_ = 0;
  int64_t step_ = 0;
  UndoList undo_;
  MetropolisStats stats_;
};

}  // namespace placeto
