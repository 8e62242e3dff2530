// Classical device placers: one interface (graph + cluster + options -> placement) behind a
// registry of names, so that the CLI, the comparison report and the learned policy's
// evaluation treat every method the same way.  docs/PLACERS.md describes each method.
//
// Contract shared by every placer (tests/placers/placer_conformance_test.cc checks it):
//  * every op gets a device in [0, cluster.num_devices());
//  * the result is a pure function of (graph, cluster, options): the same seed gives the same
//    placement (a wall-time cap, when set, is the one documented exception);
//  * when the cluster has memory capacities, the placer tries to stay within them
//    (feasible = SimResult::memory_ok) and, when it cannot, still returns a placement --
//    evaluate_placement() then reports feasible = false and says which devices overflow.
//
// Threading: a Placer holds no state between calls; place() may run concurrently on
// different graphs from different threads.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "sim/cluster.h"
#include "sim/graph.h"

namespace placeto {

struct PlacerOptions {
  int64_t seed = 1;
  // Method-specific effort; 0 means the method's default.  anneal: simulations (default
  // 2000).  Other methods ignore it.
  int64_t budget = 0;
  // random: how many random placements to draw and keep the best of (0 = default 16).
  int samples = 0;
  // anneal: stop after this many seconds even if the budget is not spent (0 = no cap).  A cap
  // makes the result depend on the machine's speed.
  double time_limit_s = 0;
  // anneal: start from this placement instead of the best fast placer's (e.g. a learned
  // policy's placement, to polish it).  Must match the graph and cluster.
  std::optional<Placement> initial;
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

// Every registered name, fast placers first, "anneal" last.
const std::vector<std::string>& placer_names();
// The fast placers: all but anneal.  "Best classical" in reports is the best of these.
const std::vector<std::string>& fast_placer_names();
// Throws InputError for an unknown name, with a "did you mean" and the list of names.
std::unique_ptr<Placer> make_placer(const std::string& name);
// The best placement of the fast placers (each run with `options`): feasible first, then the
// fastest by the simulator.  Anneal's default start, and the episode start "placer:best".
Placement best_fast_placement(const Graph& graph, const Cluster& cluster,
                              const PlacerOptions& options);

// A deterministic random source for placers.  std::mt19937_64's sequence is fixed by the
// standard; the draws below are written out so they do not depend on the standard library's
// distribution implementations either.
class PlacerRng {
 public:
  explicit PlacerRng(int64_t seed) : engine_(static_cast<uint64_t>(seed)) {}
  // Uniform in [0, n).  REQUIRES: n >= 1.
  int64_t uniform_int(int64_t n) {
    return static_cast<int64_t>(engine_() % static_cast<uint64_t>(n));
  }
  // Uniform in [0, 1).
  double uniform01() { return static_cast<double>(engine_() >> 11) * 0x1.0p-53; }

 private:
  std::mt19937_64 engine_;
};

}  // namespace placeto
