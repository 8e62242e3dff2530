// Peak activation memory per device in the Placeto model (docs/SIMULATOR.md): every op v
// whose outputs sum to m > 0 bytes holds m on its device from its start until
// max(start(v), max over children w of floor(start(w)) + floor(c(w)) - 1), allocations before
// frees at equal times.  Computed from a finished schedule without sorting: ops on one device
// start in order, so each free is placed, by one branch-free binary search, just before the
// first allocation on its device that starts strictly later, and one pass over each device's
// allocations sums them.  Not thread-safe; reuses its buffers (no allocation after the
// first call).
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
  const Graph& graph_;
  const int num_devices_;
  std::vector<double> floor_cost_;     // floor(cost) per op
  std::vector<double> last_use_;       // per op: when it last reads its inputs
  std::vector<int32_t> child_offset_;  // children of each op (CSR)
  std::vector<NodeId> child_;
  std::vector<int32_t> dev_offset_;  // per device: its first slot (num_devices + 1)
  std::vector<int32_t> dev_fill_;
  std::vector<int32_t> slot_;        // per op: its slot in the device-major start order
  std::vector<double> slot_start_;   // per slot: start time
  std::vector<int64_t> slot_alloc_;  // per slot: bytes allocated at its start
  std::vector<int64_t> slot_free_;   // per slot: bytes freed just before its start
  std::vector<double> slot_free_t_;  // per slot: when its op's outputs are freed
};

}  // namespace placeto
