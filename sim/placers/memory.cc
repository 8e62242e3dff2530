#include "sim/placers/memory.h"

#include <limits>

#include "common/error.h"

namespace placeto {

namespace {
constexpr double kUnlimited = std::numeric_limits<double>::infinity();

double capacity_of(const Cluster& c, int d) {
  return c.devices[d].memory_bytes > 0 ? c.devices[d].memory_bytes : kUnlimited;
}
}  // namespace

int64_t op_footprint_bytes(const Graph& g, NodeId v) {
  return g.param_bytes(v) + g.total_out_bytes(v);
}

MemoryLedger::MemoryLedger(const Graph& g, const Cluster& c)
    : g_(g), capacity_(c.num_devices()), used_(c.num_devices(), 0) {
  for (int d = 0; d < c.num_devices(); ++d) capacity_[d] = capacity_of(c, d);
}

bool MemoryLedger::fits(NodeId v, int d) const {
  return static_cast<double>(used_[d] + op_footprint_bytes(g_, v)) <= capacity_[d];
}

double MemoryLedger::free_bytes(int d) const {
  return capacity_[d] - static_cast<double>(used_[d]);
}

int MemoryLedger::roomiest_device() const {
  int best = 0;
  for (int d = 1; d < static_cast<int>(used_.size()); ++d)
    if (free_bytes(d) > free_bytes(best)) best = d;
  return best;
}

bool repair_memory(const Graph& g, const Cluster& c, Simulator& sim, Placement* p) {
  if (!c.has_memory_limits()) return true;
  const int n = g.num_nodes();
  const int num_dev = c.num_devices();
  std::vector<char> moved(n, 0);
  std::vector<double> slack(num_dev);
  // Each op moves at most once, so this terminates after at most n moves.
  for (int iter = 0; iter <= n; ++iter) {
    const SimResult& r = sim.simulate(*p);
    if (r.memory_ok) return true;
    int worst = -1;
    for (int d = 0; d < num_dev; ++d) {
      slack[d] = capacity_of(c, d) - static_cast<double>(r.peak_mem_bytes[d] + r.param_bytes[d]);
      if (r.over_capacity[d] && (worst < 0 || slack[d] < slack[worst])) worst = d;
    }
    PLACETO_CHECK_GE(worst, 0);
    int target = -1;
    for (int d = 0; d < num_dev; ++d)
      if (d != worst && (target < 0 || slack[d] > slack[target])) target = d;
    if (target < 0 || slack[target] <= 0) return false;
    NodeId pick = -1;
    for (NodeId v = 0; v < n; ++v) {
      if (moved[v] || p->device[v] != worst) continue;
      const int64_t f = op_footprint_bytes(g, v);
      if (f == 0 || static_cast<double>(f) > slack[target]) continue;
      if (pick < 0 || f > op_footprint_bytes(g, pick)) pick = v;
    }
    if (pick < 0) return false;
    p->device[pick] = target;
    moved[pick] = 1;
  }
  return sim.simulate(*p).memory_ok;
}

bool repair_memory(const Graph& g, const Cluster& c, Placement* p) {
  if (!c.has_memory_limits()) return true;
  Simulator sim(g, c);
  return repair_memory(g, c, sim, p);
}

}  // namespace placeto
