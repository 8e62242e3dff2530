// Simulated annealing over single-op moves, scored by the simulator: the slow "best-known"
// reference that learned policies are compared with.  Not one of the fast placers.
#include <algorithm>
#include <chrono>
#include <cmath>

#include "common/error.h"
#include "sim/placers/memory.h"
#include "sim/placers/methods.h"
#include "sim/simulator.h"

namespace placeto {
namespace {

constexpr int64_t kDefaultBudget = 2000;

// Runtime, inflated by the relative overflow of every device over its capacity: an
// infeasible placement must look worse than any feasible one near it.
double score(const SimResult& r, const Cluster& c) {
  double over = 0;
  for (int d = 0; d < c.num_devices(); ++d) {
    if (!r.over_capacity[d]) continue;
    const double cap = c.devices[d].memory_bytes;
    over += (static_cast<double>(r.peak_mem_bytes[d] + r.param_bytes[d]) - cap) / cap;
  }
  return r.runtime_us * (1.0 + (over > 0 ? 1.0 + 10.0 * over : 0.0));
}

class AnnealPlacer : public Placer {
 public:
  std::string name() const override { return "anneal"; }

  // Start: options.initial, or else the best (feasible first, then fastest) of the fast
  // placers run with the same seed.  Each step moves one op to another device -- half the
  // time to the device of one of its neighbours, which is how transfers disappear, otherwise
  // to a uniformly drawn one -- and is kept by the Metropolis rule on the score (runtime,
  // plus a penalty proportional to memory overflow).  The temperature falls geometrically
  // from 2% to 0.002% of the starting score over the budget.  The best placement seen is
  // returned, so the result is never worse than the start.
  Placement place(const Graph& g, const Cluster& c, const PlacerOptions& o) const override {
    const int n = g.num_nodes();
    const int num_dev = c.num_devices();
    Simulator sim(g, c);
    Placement current = o.initial ? *o.initial : best_fast_placement(g, c, o);
    if (current.num_devices != num_dev || static_cast<int>(current.device.size()) != n)
      throw InputError("anneal: the initial placement is for " +
                       std::to_string(current.num_devices) + " devices and " +
                       std::to_string(current.device.size()) + " ops, but graph '" + g.name() +
                       "' has " + std::to_string(n) + " ops and the cluster " +
                       std::to_string(num_dev) + " devices");
    validate_placement(g, current, "anneal initial placement");
    double current_score = score(sim.simulate(current), c);
    Placement best = current;
    double best_score = current_score;
    if (num_dev == 1 || n == 0) return best;

    const int64_t budget = o.budget > 0 ? o.budget : kDefaultBudget;
    const double t_start = 0.02 * current_score, t_end = 2e-5 * current_score;
    const double cooling = budget > 1 ? std::pow(t_end / t_start, 1.0 / (budget - 1)) : 1.0;
    double temperature = t_start;
    PlacerRng rng(o.seed);
    const auto t0 = std::chrono::steady_clock::now();
    const auto& ce = g.child_edges();
    const auto& pe = g.parent_edges();
    for (int64_t step = 0; step < budget; ++step, temperature *= cooling) {
      if (o.time_limit_s > 0 && (step & 63) == 0 &&
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() >
              o.time_limit_s)
        break;
      const NodeId v = static_cast<NodeId>(rng.uniform_int(n));
      const int old = current.device[v];
      int target = -1;
      const int degree = g.in_degree(v) + g.out_degree(v);
      if (degree > 0 && rng.uniform01() < 0.5) {
        const int k = static_cast<int>(rng.uniform_int(degree));
        const NodeId u = k < g.in_degree(v) ? g.edge_src(pe[g.parent_begin(v) + k])
                                            : g.edge_dst(ce[g.child_begin(v) + k - g.in_degree(v)]);
        target = current.device[u];
      }
      if (target < 0 || target == old) {
        target = static_cast<int>(rng.uniform_int(num_dev - 1));
        if (target >= old) ++target;
      }
      current.device[v] = target;
      const double s = score(sim.simulate(current), c);
      const double delta = s - current_score;
      if (delta <= 0 || rng.uniform01() < std::exp(-delta / temperature)) {
        current_score = s;
        if (s < best_score) {
          best_score = s;
          best = current;
        }
      } else {
        current.device[v] = old;
      }
    }
    return best;
  }
};

}  // namespace

Placement best_fast_placement(const Graph& g, const Cluster& c, const PlacerOptions& o) {
  Simulator sim(g, c);
  Placement best;
  double best_score = 0;
  for (const std::string& name : fast_placer_names()) {
    Placement p = make_placer(name)->place(g, c, o);
    const double s = score(sim.simulate(p), c);
    if (best.device.empty() || s < best_score) {
      best = std::move(p);
      best_score = s;
    }
  }
  return best;
}

std::unique_ptr<Placer> make_anneal_placer() { return std::make_unique<AnnealPlacer>(); }

}  // namespace placeto
