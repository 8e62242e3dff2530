// Discrete-event simulation of one training step of a placed graph.
//
// The compatible mode reproduces the Placeto paper's simulator exactly (docs/SIMULATOR.md
// states its rules): per-device compute queues, one outgoing transfer bus per device, events
// ordered by (time, kind, key).  The heterogeneous mode (Cluster::mode) runs the same event
// loop with per-device speeds, per-link bandwidth and latency, one transfer per destination
// device, and a queue per bus or per link; it is a separate instantiation of the loop so the
// compatible mode pays nothing for it.  A Simulator is bound to one graph and cluster and reuses
// its buffers, so simulate() allocates nothing after the first call.  Not thread-safe: use one
// Simulator per thread.
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
    int out;              // output index
    int device;           // source device
    int dst_device = -1;  // heterogeneous mode: the destination; -1 in the compatible mode
    double start_us, end_us;
    int64_t bytes;
    std::vector<NodeId> dsts;
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

class Simulator {
 public:
  // Keeps references to `graph` and `cluster`: both must outlive the simulator.
  Simulator(const Graph& graph, const Cluster& cluster);
  Simulator(const Simulator&) = delete;
  Simulator& operator=(const Simulator&) = delete;

  // REQUIRES: placement valid for the graph, placement.num_devices == cluster devices.
  // Throws InputError if some op never runs.
  const SimResult& simulate(const Placement& placement, ExecutionTrace* trace = nullptr);

  // Start and end time of every op in the latest simulation.
  const std::vector<double>& start_us() const { return start_; }
  const std::vector<double>& end_us() const { return end_; }
  const SimResult& last_result() const { return result_; }
  const Graph& graph() const { return graph_; }
  const Cluster& cluster() const { return cluster_; }

 private:
  struct Event {
    double t;
    uint64_t order;   // kind in the top bits, then the key
    int32_t payload;  // edge id (release) or device index (bus, device)
  };
  struct BusItem {
    double ready;
    uint64_t seq;
    double delay;    // bytes / bandwidth: how long the transfer occupies the queue
    double latency;  // added to the arrival time only (0 in the compatible mode)
    int32_t dst;     // destination device (heterogeneous mode)
    int32_t first;   // into bus_edges_
    int32_t count;
  };

  void push_event(double t, uint64_t order, int32_t payload);
  Event pop_event();
  void bus_push(int d, int32_t item);
  int32_t bus_top(int d) const { return bus_heap_[d][0]; }
  void bus_pop(int d);
  bool bus_less(int32_t a, int32_t b) const {
    const BusItem& x = bus_items_[a];
    const BusItem& y = bus_items_[b];
    return x.ready < y.ready || (x.ready == y.ready && x.seq < y.seq);
  }
  void schedule_release(double t, EdgeId e);
  void enqueue_device(int d, NodeId v, double t);
  void compute_memory(const Placement& p);
  // The event loop; returns the number of ops that ran.
  template <bool kHetero>
  int run_events(const Placement& p);
  int bus_queue(int src, int dst) const { return per_link_ ? src * num_dev_ + dst : src; }

  const Graph& graph_;
  const Cluster& cluster_;
  const bool hetero_;
  const bool per_link_;
  const int num_dev_;
  std::vector<double> speed_;               // heterogeneous mode: per device
  std::vector<double> link_bw_, link_lat_;  // heterogeneous mode: per (src, dst)
  std::vector<uint64_t> release_order_;     // per edge, precomputed event order key
  std::vector<Event> heap_;
  std::vector<std::vector<NodeId>> dev_fifo_;
  std::vector<size_t> dev_head_;
  std::vector<char> dev_busy_, bus_busy_;
  std::vector<std::vector<int32_t>> bus_heap_;
  std::vector<BusItem> bus_items_;
  std::vector<EdgeId> bus_edges_;
  std::vector<int32_t> satisfied_;
  std::vector<int32_t> group_out_;  // scratch: output indices of the current op's transfers
  std::vector<double> start_, end_;
  struct MemRecord {
    double t;
    int64_t amount;
    int32_t device;
  };
  std::vector<MemRecord> mem_records_;
  std::vector<int64_t> mem_cur_;
  uint64_t seq_ = 0;
  const Placement* placement_ = nullptr;
  ExecutionTrace* trace_ = nullptr;
  SimResult result_;
};

}  // namespace placeto
