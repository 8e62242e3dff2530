// Simulated annealing over single-op moves, scored by the simulator: the slow "best-known"
// reference that learned policies are compared with.  Not one of the fast placers.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/error.h"
#include "sim/placers/memory.h"
#include "sim/placers/methods.h"
#include "sim/placers/registry.h"
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

// The number of simulations that fit in what is left of `time_ms` since `t_call`, timed on
// 32 single-op moves spread over `p` (restored afterwards).  At least 1.
int64_t budget_for_time(Simulator& sim, Placement& p, double time_ms,
                        std::chrono::steady_clock::time_point t_call) {
  constexpr int kProbes = 32;
  const int n = static_cast<int>(p.device.size());
  const auto t0 = std::chrono::steady_clock::now();
  for (int k = 0; k < kProbes; ++k) {
    const int v =
        static_cast<int>((static_cast<int64_t>(k) * n) / kProbes);  // spread over the graph
    const int32_t old = p.device[v];
    p.device[v] = (old + 1) % p.num_devices;
    sim.simulate(p);
    p.device[v] = old;
  }
  const auto t1 = std::chrono::steady_clock::now();
  const double per_sim_ms = std::chrono::duration<double, std::milli>(t1 - t0).count() / kProbes;
  const double left_ms = time_ms - std::chrono::duration<double, std::milli>(t1 - t_call).count();
  if (!(left_ms > 0) || !(per_sim_ms > 0)) return 1;
  return std::max<int64_t>(1, static_cast<int64_t>(left_ms / per_sim_ms));
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
  //
  // With options.move_groups, half of the steps (every step with move_groups_only) move a
  // drawn op's whole group to a uniformly drawn other device instead: an op with its
  // gradient and update ops (training_op_groups), or the groups of a coarsening, so that
  // the search runs over placements of the coarse graph scored on the ops themselves.
  //
  // With options.time_ms the budget is sized at the start of the call: the time already
  // spent (the start placement) is subtracted, 32 simulations of single-op moves are timed,
  // and the budget is what fits in the rest.  The schedule then runs to the end on it.
  Placement place(const Graph& g, const Cluster& c, const PlacerOptions& o) const override {
    const auto t_call = std::chrono::steady_clock::now();
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
    if (o.stats) *o.stats = PlacerStats{};
    if (num_dev == 1 || n == 0) return best;

    int64_t budget = o.budget > 0 ? o.budget : kDefaultBudget;
    if (o.time_ms > 0) budget = budget_for_time(sim, current, o.time_ms, t_call);
    if (o.stats) o.stats->budget = budget;
    const double t_start = 0.02 * current_score, t_end = 2e-5 * current_score;
    const double cooling = budget > 1 ? std::pow(t_end / t_start, 1.0 / (budget - 1)) : 1.0;
    double temperature = t_start;
    PlacerRng rng(o.seed);
    const auto t0 = std::chrono::steady_clock::now();
    const auto& ce = g.child_edges();
    const auto& pe = g.parent_edges();
    // Group moves (options.move_groups): the members of each group, and each op's group.
    std::vector<std::vector<NodeId>> members;
    std::vector<int> group_index;
    if (!o.move_groups.empty()) {
      if (static_cast<int>(o.move_groups.size()) != n)
        throw InputError("anneal: move_groups has " + std::to_string(o.move_groups.size()) +
                         " entries, but graph '" + g.name() + "' has " + std::to_string(n) +
                         " ops");
      std::unordered_map<int32_t, int> index;
      group_index.resize(n);
      for (NodeId v = 0; v < n; ++v) {
        auto [it, fresh] = index.emplace(o.move_groups[v], static_cast<int>(members.size()));
        if (fresh) members.emplace_back();
        group_index[v] = it->second;
        members[it->second].push_back(v);
      }
    }
    std::vector<std::pair<NodeId, int32_t>> undo;
    for (int64_t step = 0; step < budget; ++step, temperature *= cooling) {
      if (o.time_limit_s > 0 && (step & 63) == 0 &&
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() >
              o.time_limit_s)
        break;
      const NodeId v = static_cast<NodeId>(rng.below(n));
      const int old = current.device[v];
      int target = -1;
      undo.clear();
      if (!members.empty() && (o.move_groups_only || rng.uniform01() < 0.5)) {
        // A group move: v's whole group to one uniformly drawn other device.
        target = static_cast<int>(rng.below(num_dev - 1));
        if (target >= old) ++target;
        for (NodeId u : members[group_index[v]]) {
          undo.push_back({u, current.device[u]});
          current.device[u] = target;
        }
      } else {
        const int degree = g.in_degree(v) + g.out_degree(v);
        if (degree > 0 && rng.uniform01() < 0.5) {
          const int k = static_cast<int>(rng.below(degree));
          const NodeId u = k < g.in_degree(v)
                               ? g.edge_src(pe[g.parent_begin(v) + k])
                               : g.edge_dst(ce[g.child_begin(v) + k - g.in_degree(v)]);
          target = current.device[u];
        }
        if (target < 0 || target == old) {
          target = static_cast<int>(rng.below(num_dev - 1));
          if (target >= old) ++target;
        }
        undo.push_back({v, old});
        current.device[v] = target;
      }
      const double s = score(sim.simulate(current), c);
      if (o.stats) ++o.stats->simulations;
      const double delta = s - current_score;
      if (delta <= 0 || rng.uniform01() < std::exp(-delta / temperature)) {
        current_score = s;
        if (s < best_score) {
          best_score = s;
          best = current;
        }
      } else {
        for (auto it = undo.rbegin(); it != undo.rend(); ++it)
          current.device[it->first] = it->second;
      }
    }
    return best;
  }
};

}  // namespace

std::unique_ptr<Placer> make_anneal_placer() { return std::make_unique<AnnealPlacer>(); }

}  // namespace placeto
