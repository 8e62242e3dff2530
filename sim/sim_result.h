// What a simulation produces: its result (runtime, peak memory, capacity) and, when asked, its
// schedule.  A header of its own so that both simulators (sim/simulator.h and
// sim/hetero_simulator.h) can name these types without including each other; the functions
// are defined in sim/simulator.cc.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/cluster.h"
#include "sim/graph.h"

namespace placeto {

// The schedule of one simulation, for traces and debugging.
struct ExecutionTrace {
  struct OpSlice {
    NodeId op;
    int device;
    double start_us, end_us;
  };
  struct Transfer {
    NodeId src;
    int out;  // output index
    int device;
    double start_us, end_us;
    int64_t bytes;
    std::vector<NodeId> dsts;
    int dst_device = -1;  // heterogeneous mode: the destination; -1 in the compatible mode
  };
  std::vector<OpSlice> ops;
  std::vector<Transfer> transfers;
  void clear() {
    ops.clear();
    transfers.clear();
  }
};

struct SimResult {
  double runtime_us = 0;
  // Peak bytes of live activations per device (the paper's memory model).
  std::vector<int64_t> peak_mem_bytes;
  // Bytes of parameters resident on each device (sum of param_bytes of its ops).
  std::vector<int64_t> param_bytes;
  // Per device: peak + params exceed the cluster's capacity (false when unlimited).
  std::vector<bool> over_capacity;
  bool memory_ok = true;
  int64_t max_peak_mem_bytes() const;
};

// Fills r's param_bytes, over_capacity and memory_ok from its peak_mem_bytes: resident
// parameters per device, and whether peak + parameters exceed each device's capacity.
void finish_memory_result(const Graph& g, const Cluster& c, const Placement& p, SimResult* r);

}  // namespace placeto
