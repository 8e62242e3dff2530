// Device placers: one interface (graph + cluster + options -> placement).  Every method,
// classical or learned, is registered by name in registry.h, so that the CLI, the comparison
// report, the evaluation protocol (protocol.h) and the trainer treat every method the same
// way.  docs/PLACERS.md describes each method.
//
// Contract shared by every placer (tests/placers/placer_conformance_test.cc checks it):
//  * every op gets a device in [0, cluster.num_devices());
//  * the result is a pure function of (graph, cluster, options): the same seed gives the same
//    placement (a wall-time cap, when set, is the one documented exception);
//  * when the cluster has memory capacities, the placer tries to stay within them
//    (feasible = SimResult::memory_ok) and, when it cannot, still returns a placement --
//    evaluate_placement() then reports feasible = false and says which devices overflow.
//
// Threading: a classical Placer holds no state between calls; place() may run concurrently on
// different graphs from different threads.  A learned placer holds its network and is used
// by one thread at a time.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/rng.h"
#include "sim/cluster.h"
#include "sim/graph.h"

namespace placeto {

// What a search reports about the effort it spent (optional output, see PlacerOptions::stats).
struct PlacerStats {
  int64_t simulations = 0;  // placements simulated by the search itself
  int64_t budget = 0;       // the budget it used (descent: sized from time_ms; timed anneal: 0)
  // Anything a placer wants reported with its placement, e.g. "fell back to partition: ..."
  // when it returns another placer's answer (reports count these).  Empty when nothing.
  std::string note;
};

struct PlacerOptions {
  int64_t seed = 1;
  // Method-specific effort; 0 means the method's default.  anneal: simulations (default
  // 2000).  Other methods ignore it.
  int64_t budget = 0;
  // Searching methods (registry: takes_budget): the whole call takes about this many
  // milliseconds on this machine.  anneal, chain-anneal, slack-anneal and the learned search
  // cool by the fraction of this time spent and end at it (their schedule completes, unlike
  // with the hard cap time_limit_s); descent sizes a budget from the cost of its first
  // simulations and also stops at time_ms.  0 = use `budget`.  Giving both is an error
  // (validate_options).
  double time_ms = 0;
  // random: how many random placements to draw and keep the best of (0 = default 16).
  int samples = 0;
  // anneal: stop after this many seconds even if the budget is not spent (0 = no cap).  A cap
  // makes the result depend on the machine's speed.
  double time_limit_s = 0;
  // Fast placers: their memory repair (memory.h repair_memory) stops at this time, leaving
  // what overflows then.  A timed search sets it for the fast placers of its start
  // (search_util.h search_start), so that one slow repair on a large graph does not take T.
  std::optional<std::chrono::steady_clock::time_point> repair_deadline;
  // anneal: start from this placement instead of the best fast placer's (e.g. a learned
  // policy's placement, to polish it).  Must match the graph and cluster.
  std::optional<Placement> initial;
  // anneal, chain-anneal, slack-anneal: the starting temperature as a fraction of the start's
  // score (0 = the placer's own, 2%).  `auto` starts its chain-anneal colder when an earlier
  // phase has already improved the start (improve/search_placers.cc).
  double anneal_t_start = 0;
  // anneal: ops with equal ids move together, in half of the moves (the others move one op)
  // or, with move_groups_only, in every move.  One id per op; empty = single-op moves only.
  std::vector<int32_t> move_groups;
  bool move_groups_only = false;
  // Learned placers (registry: needs_checkpoint): the checkpoint file, directory or LATEST.
  std::string checkpoint;
  // Learned placers: "key=value" overrides of the checkpoint's config that change how it
  // places, not its network (e.g. policy.coarse_groups=128); a key that changes the network
  // fails when the parameters are read.
  std::vector<std::string> checkpoint_overrides;
  // The learned search (policy-search, scorer-greedy, auto): "key=value" settings of its moves
  // (improve/search_placers.h lists the keys).  Other methods ignore them.
  std::vector<std::string> search_settings;
  // When set, a search writes what it spent here, and a placer that falls back to another's
  // answer says so in `note`.  Not part of the result.
  PlacerStats* stats = nullptr;
};

class Placer {
 public:
  virtual ~Placer() = default;
  // The registry name ("heft", "m-sct", ...).
  virtual std::string name() const = 0;
  // REQUIRES: cluster.num_devices() >= 1.
  virtual Placement place(const Graph& graph, const Cluster& cluster,
                          const PlacerOptions& options) const = 0;
};

// Placers draw from the project's portable Rng (common/rng.h).
using PlacerRng = Rng;

}  // namespace placeto
