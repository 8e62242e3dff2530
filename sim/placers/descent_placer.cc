// Steepest descent over single-op moves, scored by the simulator: from the start placement
// (options.initial, or the best fast placer's), simulate every move of one op to another
// device, apply the best if it lowers the score, and repeat until no move does or the budget
// of simulations is spent.  A classical local search that a learned improvement policy must
// beat (issue #20): each of its steps costs N (D - 1) simulations, a policy's one forward pass.
#include <algorithm>
#include <chrono>

#include "sim/placers/methods.h"
#include "sim/placers/search_util.h"

namespace placeto {
namespace {

// Enough for steepest descent to reach a local optimum on the graphs of this project
// (a 342-op nmt graph on 3 devices needed 26,600), and a bound on larger ones.
constexpr int64_t kDefaultBudget = 100000;

class DescentPlacer : public Placer {
 public:
  std::string name() const override { return "descent"; }

  // Deterministic given a budget: ops in id order, target devices in ascending order, and the
  // first of equal best moves.  With options.time_ms the budget is sized from timed
  // probes (budget_for_time, search_util.h), and the call also stops when time_ms has passed: the
  // budget is sized from the cost of a simulation at the start, and on some graphs the
  // simulations grow slower as the descent spreads the ops (ptb at 8 devices: up to 2.3x
  // the time asked for before this stop).  When the budget or the time runs out in the middle
  // of a sweep, the best improving move of the part swept is applied.  The result is never
  // worse than the start.
  Placement place(const Graph& g, const Cluster& c, const PlacerOptions& o) const override {
    const auto t_call = std::chrono::steady_clock::now();
    const int n = g.num_nodes();
    const int num_dev = c.num_devices();
    Simulator sim(g, c);
    Placement current = search_start(g, c, o, "descent");
    double current_score = search_score(sim.simulate(current), c);
    reset_stats_keeping_note(o.stats);
    if (num_dev == 1 || n == 0) return current;
    int64_t budget = o.budget > 0 ? o.budget : kDefaultBudget;
    if (o.time_ms > 0) budget = budget_for_time(sim, current, o.time_ms, t_call);
    if (o.stats) o.stats->budget = budget;
    int64_t spent = 0;
    const bool timed = o.time_ms > 0;
    auto out_of_time = [&] { return timed && ms_since(t_call) >= o.time_ms; };
    bool stopped = false;  // by the clock
    while (spent < budget && !stopped) {
      double best_score = current_score;
      NodeId best_op = -1;
      int32_t best_device = -1;
      for (NodeId v = 0; v < n && spent < budget && !stopped; ++v) {
        const int32_t old = current.device[v];
        for (int32_t d = 0; d < num_dev && spent < budget && !stopped; ++d) {
          if (d == old) continue;
          if (out_of_time()) {
            stopped = true;
            break;
          }
          current.device[v] = d;
          const double s = search_score(sim.simulate(current), c);
          ++spent;
          if (score_improves(s, best_score)) {
            best_score = s;
            best_op = v;
            best_device = d;
          }
        }
        current.device[v] = old;
      }
      if (best_op < 0) break;  // a local optimum (or a budget spent without a better move)
      current.device[best_op] = best_device;
      current_score = best_score;
    }
    if (o.stats) o.stats->simulations = spent;
    return current;
  }
};

}  // namespace

std::unique_ptr<Placer> make_descent_placer() { return std::make_unique<DescentPlacer>(); }

}  // namespace placeto
