#include "sim/peak_memory.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "common/error.h"

namespace placeto {

namespace {
// floor(x) for x >= 0 without a libm call: truncation is floor there, and every double at or
// above 2^52 is already an integer.
inline double floor_nonneg(double x) {
  return x < 4503599627370496.0 ? static_cast<double>(static_cast<int64_t>(x)) : x;
}
constexpr double kInf = std::numeric_limits<double>::infinity();
}  // namespace

PeakMemory::PeakMemory(const Graph& graph, int num_devices)
    : num_devices_(num_devices), num_nodes_(graph.num_nodes()) {
  const int n = num_nodes_;
  alloc_.resize(n);
  floor_cost_.resize(n);
  block_offset_.push_back(0);
  for (NodeId v = 0; v < n; ++v) {
    alloc_[v] = graph.total_out_bytes(v);
    floor_cost_[v] = std::floor(graph.cost_us(v));
    if (alloc_[v] <= 0) continue;
    allocating_.push_back(v);
    int k = 0;
    for (int i = graph.child_begin(v); i < graph.child_end(v); ++i, ++k)
      block_.push_back(graph.edge_dst(graph.child_edges()[i]));
    for (; k == 0 || k % kBlock != 0; ++k) block_.push_back(n);
    block_offset_.push_back(static_cast<int32_t>(block_.size() / kBlock));
  }
  last_use_.assign(n + 1, -kInf);
  slot_.assign(n, 0);
  fill_.assign(num_devices, 0);
  int64_t max_stride = 1;
  while (max_stride < static_cast<int64_t>(n) + 1) max_stride *= 2;
  PLACETO_CHECK_LT(max_stride * num_devices, int64_t{1} << 31);
  slot_start_.assign(max_stride * num_devices, kInf);
  slot_delta_.assign(max_stride * num_devices, 0);
}

void PeakMemory::compute(const Placement& p, const std::vector<double>& start_us,
                         const std::vector<NodeId>& run_order, std::vector<int64_t>* peak_bytes) {
  const int32_t* dev = p.device.data();
  const double* start = start_us.data();
  // The searches all take log2(stride_) steps: a power of two above every device's op count.
  std::fill(fill_.begin(), fill_.end(), 0);
  for (NodeId v : run_order) ++fill_[dev[v]];
  int32_t most = 0;
  for (int32_t c : fill_) most = std::max(most, c);
  stride_ = 1;
  while (stride_ < most + 1) stride_ *= 2;
  for (int d = 0; d < num_devices_; ++d) {
    std::fill(slot_start_.begin() + d * stride_ + fill_[d],
              slot_start_.begin() + (d + 1) * stride_, kInf);
    std::fill(slot_delta_.begin() + d * stride_ + fill_[d],
              slot_delta_.begin() + (d + 1) * stride_, 0);
    fill_[d] = d * stride_;
  }
  for (NodeId v : run_order) {
    const int32_t s = fill_[dev[v]]++;
    slot_[v] = s;
    slot_start_[s] = start[v];
    slot_delta_[s] = alloc_[v];
    // The time v last needs its inputs, in the reference's integer arithmetic.
    last_use_[v] = floor_nonneg(start[v]) + floor_cost_[v] - 1.0;
  }
  // Frees at a time equal to an allocation's come after it, so an op's bytes leave just
  // before the first allocation on its device that starts strictly after its free time (after
  // its own: free time >= start).  Children come in blocks of four and the searches have one
  // length, so there are no data-dependent branches and the processor overlaps the ops.
  const NodeId* block = block_.data();
  for (size_t k = 0; k < allocating_.size(); ++k) {
    const NodeId v = allocating_[k];
    double free_t = start[v];
    for (int32_t b = block_offset_[k]; b < block_offset_[k + 1]; ++b) {
      const NodeId* c = block + b * kBlock;
      const double m01 = std::max(last_use_[c[0]], last_use_[c[1]]);
      const double m23 = std::max(last_use_[c[2]], last_use_[c[3]]);
      free_t = std::max(free_t, std::max(m01, m23));
    }
    const double* base = slot_start_.data() + dev[v] * stride_;
    const double* q = base;
    for (int32_t half = stride_ / 2; half >= 1; half /= 2) q = q[half] <= free_t ? q + half : q;
    // q is the last slot starting at or before free_t (v's own at least); the next one frees.
    slot_delta_[q - slot_start_.data() + 1] -= alloc_[v];
  }
  peak_bytes->assign(num_devices_, 0);
  for (int d = 0; d < num_devices_; ++d) {
    int64_t cur = 0, peak = 0;
    for (int32_t s = d * stride_, e = fill_[d]; s < e; ++s) {
      cur += slot_delta_[s];
      peak = std::max(peak, cur);
    }
    (*peak_bytes)[d] = peak;
  }
}

}  // namespace placeto
