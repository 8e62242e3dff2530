#include "sim/peak_memory.h"

#include <algorithm>
#include <cmath>

namespace placeto {

namespace {
// floor(x) for x >= 0 without a libm call: truncation is floor there, and every double at or
// above 2^52 is already an integer.
inline double floor_nonneg(double x) {
  return x < 4503599627370496.0 ? static_cast<double>(static_cast<int64_t>(x)) : x;
}
}  // namespace

PeakMemory::PeakMemory(const Graph& graph, int num_devices)
    : graph_(graph), num_devices_(num_devices) {
  const int n = graph.num_nodes();
  floor_cost_.resize(n);
  for (NodeId v = 0; v < n; ++v) floor_cost_[v] = std::floor(graph.cost_us(v));
  last_use_.assign(n, 0);
  child_offset_.assign(n + 1, 0);
  child_.reserve(graph.num_edges());
  for (NodeId v = 0; v < n; ++v) {
    for (int i = graph.child_begin(v); i < graph.child_end(v); ++i)
      child_.push_back(graph.edge_dst(graph.child_edges()[i]));
    child_offset_[v + 1] = static_cast<int32_t>(child_.size());
  }
  dev_offset_.assign(num_devices + 1, 0);
  dev_fill_.assign(num_devices, 0);
  slot_.assign(n, 0);
  slot_start_.assign(n + num_devices, 0);
  slot_alloc_.assign(n + num_devices, 0);
  slot_free_.assign(n + num_devices, 0);
  slot_free_t_.assign(n + num_devices, 0);
}

void PeakMemory::compute(const Placement& p, const std::vector<double>& start_us,
                         const std::vector<NodeId>& run_order, std::vector<int64_t>* peak_bytes) {
  const Graph& g = graph_;
  const int32_t* dev = p.device.data();
  const double* start = start_us.data();
  // Slots: the ops of each device in start order, devices one after another, each device
  // followed by one spare slot that collects frees after its last allocation.
  std::fill(dev_fill_.begin(), dev_fill_.end(), 0);
  for (NodeId v : run_order) ++dev_fill_[dev[v]];
  for (int d = 0; d < num_devices_; ++d) {
    dev_offset_[d + 1] = dev_offset_[d] + dev_fill_[d] + 1;
    dev_fill_[d] = dev_offset_[d];
  }
  for (NodeId v : run_order) {
    const int32_t s = dev_fill_[dev[v]]++;
    slot_[v] = s;
    slot_start_[s] = start[v];
    slot_alloc_[s] = g.total_out_bytes(v);
    // The time v last needs its inputs, in the reference's integer arithmetic.
    last_use_[v] = floor_nonneg(start[v]) + floor_cost_[v] - 1.0;
  }
  for (NodeId v : run_order) {
    double free_t = start[v];
    for (int32_t i = child_offset_[v], e = child_offset_[v + 1]; i < e; ++i)
      free_t = std::max(free_t, last_use_[child_[i]]);
    slot_free_t_[slot_[v]] = free_t;
  }
  // Frees at a time equal to an allocation's come after it, so an op's bytes leave just
  // before the first allocation on its device that starts strictly after its free time (after
  // its own: free time >= start).  The searches have the same length for all ops of a device
  // and no branches, so the processor overlaps them.
  for (int d = 0; d < num_devices_; ++d) {
    const int32_t first = dev_offset_[d], end = dev_offset_[d + 1] - 1;
    std::fill(slot_free_.begin() + first, slot_free_.begin() + end + 1, 0);
    const double* base = slot_start_.data() + first;
    for (int32_t s = first; s < end; ++s) {
      const double free_t = slot_free_t_[s];
      const double* b = base;
      for (int32_t len = end - first; len > 1;) {
        const int32_t half = len / 2;
        b = b[half] <= free_t ? b + half : b;
        len -= half;
      }
      const int32_t q = static_cast<int32_t>(b - slot_start_.data()) + (*b <= free_t ? 1 : 0);
      slot_free_[q] += slot_alloc_[s];  // q == end: the spare slot
    }
  }
  peak_bytes->assign(num_devices_, 0);
  for (int d = 0; d < num_devices_; ++d) {
    int64_t cur = 0, peak = 0;
    for (int32_t s = dev_offset_[d]; s < dev_offset_[d + 1] - 1; ++s) {
      cur += slot_alloc_[s] - slot_free_[s];
      peak = std::max(peak, cur);
    }
    (*peak_bytes)[d] = peak;
  }
}

}  // namespace placeto
