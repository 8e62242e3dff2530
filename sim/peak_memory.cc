#include "sim/peak_memory.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "common/error.h"

namespace placeto {

namespace {
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
  PLACETO_CHECK_LT((int64_t{n} + 1 + kWindow) * num_devices, int64_t{1} << 31);
  stride_ = n + 1 + kWindow;
  slot_start_.assign(static_cast<size_t>(stride_) * num_devices, kInf);
  slot_delta_.assign(static_cast<size_t>(stride_) * num_devices, 0);
}

void PeakMemory::begin() {
  for (int d = 0; d < num_devices_; ++d) fill_[d] = d * stride_;
}

void PeakMemory::finish(const Placement& p, const std::vector<double>& start_us,
                        std::vector<int64_t>* peak_bytes) {
  const int32_t* dev = p.device.data();
  const double* start = start_us.data();
  for (int d = 0; d < num_devices_; ++d) {
    std::fill(slot_start_.begin() + fill_[d], slot_start_.begin() + fill_[d] + kWindow + 1, kInf);
    slot_delta_[fill_[d]] = 0;
  }
  // Frees at a time equal to an allocation's come after it, so an op's bytes leave just
  // before the first allocation on its device that starts strictly after its free time (after
  // its own: free time >= start).  Children come in blocks of four, and most frees land a
  // few slots after their op's own, so the common path has no data-dependent branches and
  // the processor overlaps the ops.
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
    // The first slot after v's own that starts after free_t: a branch-free binary search over
    // the next kWindow slots, and past them (rarely) over the rest of the device.
    const double* q = slot_start_.data() + slot_[v];
    for (int half = kWindow / 2; half >= 1; half /= 2) q = q[half] <= free_t ? q + half : q;
    ++q;
    if (*q <= free_t) {  // q is the first of the slots left; the spare at the end is +inf
      for (int32_t len = fill_[dev[v]] - static_cast<int32_t>(q - slot_start_.data()) + 1;
           len > 1;) {
        const int32_t half = len / 2;
        q = q[half] <= free_t ? q + half : q;
        len -= half;
      }
      ++q;
    }
    slot_delta_[q - slot_start_.data()] -= alloc_[v];
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
