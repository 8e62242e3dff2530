#include "sim/placers/search_util.h"

#include <algorithm>
#include <string>

#include "common/error.h"
#include "sim/placers/memory_rule.h"
#include "sim/placers/registry.h"

namespace placeto {

double search_score(const SimResult& r, const Cluster& c) {
  return memory_rule_score(memory_overflow(r, c), r.runtime_us);
}

Placement search_start(const Graph& g, const Cluster& c, const PlacerOptions& o,
                       const char* method) {
  const int n = g.num_nodes();
  Placement p = o.initial ? *o.initial : best_fast_placement(g, c, o);
  if (p.num_devices != c.num_devices() || static_cast<int>(p.device.size()) != n)
    throw InputError(std::string(method) + ": the initial placement is for " +
                     std::to_string(p.num_devices) + " devices and " +
                     std::to_string(p.device.size()) + " ops, but graph '" + g.name() + "' has " +
                     std::to_string(n) + " ops and the cluster " + std::to_string(c.num_devices()) +
                     " devices");
  validate_placement(g, p, std::string(method) + " initial placement");
  return p;
}

int64_t budget_for_time(Simulator& sim, Placement& p, double time_ms,
                        std::chrono::steady_clock::time_point t_call) {
  constexpr int kProbes = 32;
  const int n = static_cast<int>(p.device.size());
  const auto t0 = std::chrono::steady_clock::now();
  for (int k = 0; k < kProbes && n > 0; ++k) {
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

}  // namespace placeto
