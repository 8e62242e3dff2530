// Peak activation memory per device in the Placeto model (docs/SIMULATOR.md): every op v
// whose outputs sum to m > 0 bytes holds m on its device from its start until
// max(start(v), max over children w of floor(start(w)) + floor(c(w)) - 1), allocations before
// frees at equal times.  Computed from a finished schedule without sorting: ops on one device
// start in order, so each free is placed, by one branch-free binary search, just before the
// first allocation on its device that starts strictly later, and one pass over each device's
// allocations sums them.  Everything that depends only on the graph (which ops allocate,
// their children padded to blocks of four) is prepared once.  Not thread-safe; reuses its
// buffers (no allocation after construction).
#pragma once

#include <cstdint>
#include <vector>

#include "sim/graph.h"

namespace placeto {

class PeakMemory {
 public:
  // Keeps a reference to `graph`: it must outlive this object.
  PeakMemory(const Graph& graph, int num_devices);

  // `start_us` holds the start time of every op and `run_order` every op once, in the order
  // they started (nondecreasing start times).  Writes num_devices values into `peak_bytes`.
  void compute(const Placement& placement, const std::vector<double>& start_us,
               const std::vector<NodeId>& run_order, std::vector<int64_t>* peak_bytes);

 private:
  static constexpr int kBlock = 4;
  const int num_devices_;
  const int num_nodes_;
  std::vector<int64_t> alloc_;     // per op: bytes of all its outputs
  std::vector<double> floor_cost_;  // per op: floor(cost)
  // Ops that allocate (m > 0) and, for each, its children padded to whole blocks of kBlock
  // with the dummy op num_nodes_ (whose last use is -inf): block_[block_offset_[k] * kBlock ..].
  std::vector<NodeId> allocating_;
  std::vector<int32_t> block_offset_;
  std::vector<NodeId> block_;
  // Per simulation.  Device d owns slots [d * stride_, (d + 1) * stride_): its ops in start
  // order, then slots starting at +inf up to a power of two that every device's searches
  // share (one more than its op count at least, so the last collects frees after its last
  // allocation).
  int32_t stride_ = 0;
  std::vector<double> last_use_;  // per op (and the dummy): when it last reads its inputs
  std::vector<int32_t> slot_;     // per op: its slot
  std::vector<int32_t> fill_;     // per device: its next slot
  std::vector<double> slot_start_;
  std::vector<int64_t> slot_delta_;  // per slot: bytes allocated at its start minus bytes freed
                                     // just before it
};

}  // namespace placeto
