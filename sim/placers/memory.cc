#include "sim/placers/memory.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "common/error.h"

namespace placeto {

double device_capacity_bytes(const Cluster& c, int d) {
  return c.devices[d].memory_bytes > 0 ? c.devices[d].memory_bytes
                                       : std::numeric_limits<double>::infinity();
}

int64_t single_device_bytes(const Graph& g) {
  const Cluster one = default_cluster(1);
  Simulator sim(g, one);
  const SimResult& r = sim.simulate(Placement(1, g.num_nodes(), 0));
  return r.peak_mem_bytes[0] + r.param_bytes[0];
}

Cluster with_balanced_capacity(Cluster c, const Graph& g, double factor) {
  if (!(factor > 0) || !std::isfinite(factor))
    throw InputError("memory factor must be a finite number > 0, got " + std::to_string(factor));
  const double cap = factor * static_cast<double>(single_device_bytes(g)) / c.num_devices();
  for (DeviceSpec& d : c.devices) d.memory_bytes = std::max(1.0, std::floor(cap));
  return c;
}

int64_t op_footprint_bytes(const Graph& g, NodeId v) {
  return g.param_bytes(v) + g.total_out_bytes(v);
}

MemoryLedger::MemoryLedger(const Graph& g, const Cluster& c)
    : g_(g), capacity_(c.num_devices()), used_(c.num_devices(), 0) {
  for (int d = 0; d < c.num_devices(); ++d) capacity_[d] = device_capacity_bytes(c, d);
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

namespace {

// Bytes over capacity, summed over devices.
double total_overflow(const SimResult& r, const Cluster& c) {
  double over = 0;
  for (int d = 0; d < c.num_devices(); ++d)
    over += std::max(0.0, static_cast<double>(r.peak_mem_bytes[d] + r.param_bytes[d]) -
                              device_capacity_bytes(c, d));
  return over;
}

// How many of the largest ops on the worst device each step tries.
constexpr int kCandidates = 8;

}  // namespace

bool repair_memory(const Graph& g, const Cluster& c, Simulator& sim, Placement* p,
                   const RepairDeadline& deadline) {
  if (!c.has_memory_limits()) return true;
  auto past_deadline = [&] { return deadline && std::chrono::steady_clock::now() >= *deadline; };
  const int n = g.num_nodes();
  const int num_dev = c.num_devices();
  std::vector<char> moved(n, 0);
  std::vector<double> slack(num_dev);
  std::vector<NodeId> candidates;
  // Each op moves at most once, so this ends after at most n moves.
  for (int iter = 0; iter <= n; ++iter) {
    const SimResult& r = sim.simulate(*p);
    if (r.memory_ok) return true;
    if (past_deadline()) return false;
    const double overflow = total_overflow(r, c);
    int worst = -1;
    for (int d = 0; d < num_dev; ++d) {
      slack[d] =
          device_capacity_bytes(c, d) - static_cast<double>(r.peak_mem_bytes[d] + r.param_bytes[d]);
      if (r.over_capacity[d] && (worst < 0 || slack[d] < slack[worst])) worst = d;
    }
    PLACETO_CHECK_GE(worst, 0);
    // The largest unmoved ops on the worst device (ties: lower id).
    candidates.clear();
    for (NodeId v = 0; v < n; ++v)
      if (!moved[v] && p->device[v] == worst && op_footprint_bytes(g, v) > 0)
        candidates.push_back(v);
    const size_t k = std::min<size_t>(kCandidates, candidates.size());
    std::partial_sort(candidates.begin(), candidates.begin() + k, candidates.end(),
                      [&](NodeId a, NodeId b) {
                        const int64_t fa = op_footprint_bytes(g, a), fb = op_footprint_bytes(g, b);
                        return fa > fb || (fa == fb && a < b);
                      });
    // Try each candidate on each device with room; keep the move that removes the most
    // overflow (then the fastest).  The simulator decides, because a move also shifts when
    // other tensors are alive.
    NodeId best_v = -1;
    int best_d = -1;
    double best_over = overflow, best_runtime = 0;
    bool stopped = false;
    for (size_t i = 0; i < k && !stopped; ++i) {
      const NodeId v = candidates[i];
      for (int d = 0; d < num_dev; ++d) {
        if (d == worst || slack[d] <= 0) continue;
        if (past_deadline()) {
          stopped = true;
          break;
        }
        p->device[v] = d;
        const SimResult& t = sim.simulate(*p);
        const double o = total_overflow(t, c);
        if (o < best_over || (best_v >= 0 && o == best_over && t.runtime_us < best_runtime)) {
          best_v = v;
          best_d = d;
          best_over = o;
          best_runtime = t.runtime_us;
        }
      }
      p->device[v] = worst;
    }
    if (stopped) return false;     // the step under way is dropped
    if (best_v < 0) return false;  // no move reduces the overflow
    p->device[best_v] = best_d;
    moved[best_v] = 1;
  }
  return sim.simulate(*p).memory_ok;
}

bool repair_memory(const Graph& g, const Cluster& c, Placement* p, const RepairDeadline& deadline) {
  if (!c.has_memory_limits()) return true;
  Simulator sim(g, c);
  return repair_memory(g, c, sim, p, deadline);
}

}  // namespace placeto
