#include "sim/placers/evaluation.h"

#include <algorithm>
#include <chrono>
#include <sstream>

#include "common/error.h"

namespace placeto {

double runtime_lower_bound_us(const Graph& g, const Cluster& c) {
  const int n = g.num_nodes();
  const int d = c.num_devices();
  PLACETO_CHECK_GE(d, 1);
  std::vector<double> fastest(n), finish(n, 0.0);
  double total = 0;
  for (NodeId v = 0; v < n; ++v) {
    double best = c.op_time_us(g.cost_us(v), 0);
    for (int k = 1; k < d; ++k) best = std::min(best, c.op_time_us(g.cost_us(v), k));
    fastest[v] = best;
    total += best;
  }
  double critical = 0;
  const std::vector<EdgeId>& parents = g.parent_edges();
  for (NodeId v : g.topo_order()) {
    double ready = 0;
    for (int i = g.parent_begin(v); i < g.parent_end(v); ++i)
      ready = std::max(ready, finish[g.edge_src(parents[i])]);
    finish[v] = ready + fastest[v];
    critical = std::max(critical, finish[v]);
  }
  return std::max(total / d, critical);
}

PlacementEvaluation evaluate_placement(Simulator& sim, const Placement& p, double lower_bound_us) {
  const SimResult& r = sim.simulate(p);
  PlacementEvaluation e;
  e.runtime_us = r.runtime_us;
  e.peak_mem_bytes = r.peak_mem_bytes;
  e.param_bytes = r.param_bytes;
  e.peak_mem_bytes_max = r.max_peak_mem_bytes();
  e.feasible = r.memory_ok;
  for (size_t d = 0; d < r.over_capacity.size(); ++d)
    if (r.over_capacity[d]) e.over_capacity_devices.push_back(static_cast<int>(d));
  e.overflow = memory_overflow(r, sim.cluster());
  e.lower_bound_us = lower_bound_us;
  e.ratio_to_lb = lower_bound_us > 0 ? e.runtime_us / lower_bound_us : 0;
  return e;
}

PlacementEvaluation evaluate_placement(const Graph& g, const Cluster& c, const Placement& p) {
  Simulator sim(g, c);
  return evaluate_placement(sim, p, runtime_lower_bound_us(g, c));
}

std::string describe_infeasibility(const Cluster& c, const PlacementEvaluation& e) {
  if (e.feasible) return "";
  std::ostringstream os;
  os << (e.over_capacity_devices.size() == 1 ? "device " : "devices ");
  for (size_t i = 0; i < e.over_capacity_devices.size(); ++i)
    os << (i ? ", " : "") << e.over_capacity_devices[i];
  os << " over capacity (";
  for (size_t i = 0; i < e.over_capacity_devices.size(); ++i) {
    const int d = e.over_capacity_devices[i];
    os << (i ? "; " : "") << c.devices[d].name << ": peak activations " << e.peak_mem_bytes[d]
       << " + parameters " << e.param_bytes[d] << " bytes > capacity "
       << static_cast<int64_t>(c.devices[d].memory_bytes);
  }
  os << ")";
  return os.str();
}

PlacerRun run_placer(const Placer& placer, const Graph& g, const Cluster& c,
                     const PlacerOptions& options) {
  PlacerRun run;
  run.method = placer.name();
  // The placer's note is wanted even when the caller did not ask for its stats.
  PlacerStats stats;
  PlacerOptions o = options;
  if (!o.stats) o.stats = &stats;
  const auto t0 = std::chrono::steady_clock::now();
  run.placement = placer.place(g, c, o);
  run.place_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  validate_placement(g, run.placement, placer.name());
  PLACETO_CHECK_EQ(run.placement.num_devices, c.num_devices());
  run.note = o.stats->note;
  run.evaluation = evaluate_placement(g, c, run.placement);
  if (!run.evaluation.feasible)
    run.message = "no feasible placement found by " + placer.name() + " for graph '" + g.name() +
                  "': " + describe_infeasibility(c, run.evaluation);
  return run;
}

}  // namespace placeto
