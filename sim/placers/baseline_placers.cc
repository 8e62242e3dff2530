// The simple baselines: single device, best of k random placements, round-robin over the
// topological order, and the "expert" pipeline split.
#include <algorithm>

#include "common/error.h"
#include "sim/placers/memory.h"
#include "sim/placers/memory_rule.h"
#include "sim/placers/methods.h"
#include "sim/simulator.h"

namespace placeto {
namespace {

// The memory rule (memory_rule.h): feasible first, then the smaller overflow, then faster.
bool better(const SimResult& a, const SimResult& b, const Cluster& c) {
  return better_under_memory_rule(memory_overflow(a, c), a.runtime_us, memory_overflow(b, c),
                                  b.runtime_us);
}

class SinglePlacer : public Placer {
 public:
  std::string name() const override { return "single"; }
  // Tries every device (they may differ in speed and capacity) and keeps the best.  It does
  // not repair: a graph that fits on no single device is reported infeasible.
  Placement place(const Graph& g, const Cluster& c, const PlacerOptions&) const override {
    Simulator sim(g, c);
    Placement best(c.num_devices(), g.num_nodes(), 0);
    SimResult best_result = sim.simulate(best);
    for (int d = 1; d < c.num_devices(); ++d) {
      Placement p(c.num_devices(), g.num_nodes(), d);
      const SimResult& r = sim.simulate(p);
      if (better(r, best_result, c)) {
        best_result = r;
        best = p;
      }
    }
    return best;
  }
};

class RandomPlacer : public Placer {
 public:
  std::string name() const override { return "random"; }
  Placement place(const Graph& g, const Cluster& c, const PlacerOptions& o) const override {
    const int k = o.samples > 0 ? o.samples : 16;
    PlacerRng rng(o.seed);
    Simulator sim(g, c);
    Placement p(c.num_devices(), g.num_nodes(), 0), best;
    SimResult best_result;
    for (int s = 0; s < k; ++s) {
      for (auto& d : p.device) d = static_cast<int32_t>(rng.below(c.num_devices()));
      const SimResult& r = sim.simulate(p);
      if (s == 0 || better(r, best_result, c)) {
        best_result = r;
        best = p;
      }
    }
    if (!best_result.memory_ok) repair_memory(g, c, sim, &best, o.repair_deadline);
    return best;
  }
};

class RoundRobinPlacer : public Placer {
 public:
  std::string name() const override { return "round-robin"; }
  Placement place(const Graph& g, const Cluster& c, const PlacerOptions& o) const override {
    Placement p(c.num_devices(), g.num_nodes(), 0);
    const auto& order = g.topo_order();
    for (size_t i = 0; i < order.size(); ++i)
      p.device[order[i]] = static_cast<int32_t>(i % c.num_devices());
    repair_memory(g, c, &p, o.repair_deadline);
    return p;
  }
};

// A stand-in for a human's pipeline split: the topological order is cut into D contiguous
// stages whose compute is proportional to the devices' speeds; stage j runs on device j.  An
// op belongs to the stage its cost midpoint falls in, which rounds boundaries to the nearer
// op instead of always overfilling the earlier stage.
class ExpertPlacer : public Placer {
 public:
  std::string name() const override { return "expert"; }
  Placement place(const Graph& g, const Cluster& c, const PlacerOptions& o) const override {
    const int num_dev = c.num_devices();
    std::vector<double> speed(num_dev);
    double speed_sum = 0;
    for (int d = 0; d < num_dev; ++d) {
      const double t = c.op_time_us(1000.0, d);
      speed[d] = t > 0 ? 1000.0 / t : 1.0;
      speed_sum += speed[d];
    }
    // Stage j ends at boundary[j] of the cumulative cost.
    const double total = g.total_cost_us();
    std::vector<double> boundary(num_dev);
    double acc = 0;
    for (int d = 0; d < num_dev; ++d) {
      acc += speed[d];
      boundary[d] = total * acc / speed_sum;
    }
    Placement p(num_dev, g.num_nodes(), 0);
    double prefix = 0;
    int stage = 0;
    for (NodeId v : g.topo_order()) {
      const double mid = prefix + g.cost_us(v) / 2;
      while (stage < num_dev - 1 && mid >= boundary[stage]) ++stage;
      p.device[v] = stage;
      prefix += g.cost_us(v);
    }
    repair_memory(g, c, &p, o.repair_deadline);
    return p;
  }
};

}  // namespace

std::unique_ptr<Placer> make_single_placer() { return std::make_unique<SinglePlacer>(); }
std::unique_ptr<Placer> make_random_placer() { return std::make_unique<RandomPlacer>(); }
std::unique_ptr<Placer> make_round_robin_placer() { return std::make_unique<RoundRobinPlacer>(); }
std::unique_ptr<Placer> make_expert_placer() { return std::make_unique<ExpertPlacer>(); }

}  // namespace placeto
