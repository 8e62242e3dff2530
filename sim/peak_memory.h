// Peak activation memory per device in the Placeto model (docs/SIMULATOR.md): every op v
// whose outputs sum to m > 0 bytes holds m on its device from its start until
// max(start(v), max over children w of floor(start(w)) + floor(c(w)) - 1), allocations before
// frees at equal times.  Computed alongside a simulation without sorting: the simulator reports
// each op as it starts (ops on one device start in order), and at the end each free is placed
// just before the first allocation on its device that starts strictly later, found by binary
// search among the next few slots (or, rarely, the rest of the device), and one pass over each
// device's allocations sums them.  Everything that depends only on the graph (which ops
// allocate, their children padded to blocks of four) is prepared once.  Not thread-safe;
// reuses its buffers (no allocation after construction).
#pragma once

#include <cstdint>
#include <vector>

#include "sim/graph.h"

namespace placeto {

class PeakMemory {
 public:
  PeakMemory(const Graph& graph, int num_devices);

  // One simulation: begin(), on_start() for every op in the order they start (nondecreasing
  // times), then finish() with every op's start time; it writes num_devices values into
  // `peak_bytes`.
  void begin();
  void on_start(NodeId v, int device, double start_us) {
    const int32_t s = fill_[device]++;
    slot_[v] = s;
    slot_start_[s] = start_us;
    slot_delta_[s] = alloc_[v];
    // The time v last needs its inputs, in the reference's integer arithmetic.
    last_use_[v] = floor_nonneg(start_us) + floor_cost_[v] - 1.0;
  }
  void finish(const Placement& placement, const std::vector<double>& start_us,
              std::vector<int64_t>* peak_bytes);

 private:
  // floor(x) for x >= 0 without a libm call: truncation is floor there, and every double at
  // or above 2^52 is already an integer.
  static double floor_nonneg(double x) {
    return x < 4503599627370496.0 ? static_cast<double>(static_cast<int64_t>(x)) : x;
  }
  static constexpr int kBlock = 4;
  static constexpr int kWindow = 16;  // a power of two
  const int num_devices_;
  const int num_nodes_;
  std::vector<int64_t> alloc_;      // per op: bytes of all its outputs
  std::vector<double> floor_cost_;  // per op: floor(cost)
  // Ops that allocate (m > 0) and, for each, its children padded to whole blocks of kBlock
  // with the dummy op num_nodes_ (whose last use is -inf): block_[block_offset_[k] * kBlock ..].
  std::vector<NodeId> allocating_;
  std::vector<int32_t> block_offset_;
  std::vector<NodeId> block_;
  // Per simulation.  Device d owns slots [d * stride_, (d + 1) * stride_): its ops in start
  // order, then kWindow + 1 slots starting at +inf (the first collects frees after its last
  // allocation).
  int32_t stride_ = 0;
  std::vector<double> last_use_;  // per op (and the dummy): when it last reads its inputs
  std::vector<int32_t> slot_;     // per op: its slot
  std::vector<int32_t> fill_;     // per device: its next slot
  std::vector<double> slot_start_;
  // Per slot: bytes allocated at its start minus bytes freed just before it.
  std::vector<int64_t> slot_delta_;
};

}  // namespace placeto
