// The general event loop behind Simulator for the heterogeneous mode (Cluster::mode):
// per-device speeds, per-link bandwidth and latency, one transfer per destination device,
// and a queue per bus or per link (docs/SIMULATOR.md).  It also runs the compatible mode
// (one event per edge release), which the equivalence tests use.  Use it through Simulator,
// which dispatches by mode.  Not thread-safe.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/cluster.h"
#include "sim/graph.h"
#include "sim/sim_result.h"

namespace placeto {

class HeteroSimulator {
 public:
  // Keeps references to `graph` and `cluster`: both must outlive the simulator.
  HeteroSimulator(const Graph& graph, const Cluster& cluster);
  // The simulator keeps references: temporaries would dangle (ASan found this twice).
  HeteroSimulator(Graph&&, const Cluster&) = delete;
  HeteroSimulator(const Graph&, Cluster&&) = delete;
  HeteroSimulator(Graph&&, Cluster&&) = delete;
  HeteroSimulator(const HeteroSimulator&) = delete;
  HeteroSimulator& operator=(const HeteroSimulator&) = delete;

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
