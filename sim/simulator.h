// Discrete-event simulation of one training step of a placed graph.
//
// The compatible mode reproduces the Placeto paper's simulator exactly (docs/SIMULATOR.md
// states its rules): per-device compute queues, one outgoing transfer bus per device, events
// ordered by (time, kind, key).  The heterogeneous mode (Cluster::mode) adds per-device speeds,
// per-link bandwidth and latency and a queue per bus or per link; Simulator hands it to
// HeteroSimulator (sim/hetero_simulator.h) so that the compatible loop stays lean.  A Simulator is bound to one graph and cluster and reuses its
// buffers, so simulate() allocates nothing after the first call.  Not thread-safe: use one
// Simulator per thread.
#pragma once

#include <cstdint>
#include <memory>
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

class HeteroSimulator;

// Fills r's param_bytes, over_capacity and memory_ok from its peak_mem_bytes: resident
// parameters per device, and whether peak + parameters exceed each device's capacity.
void finish_memory_result(const Graph& g, const Cluster& c, const Placement& p, SimResult* r);

class Simulator {
 public:
  // Keeps references to `graph` and `cluster`: both must outlive the simulator.
  Simulator(const Graph& graph, const Cluster& cluster);
  ~Simulator();
  Simulator(const Simulator&) = delete;
  Simulator& operator=(const Simulator&) = delete;

  // REQUIRES: placement valid for the graph, placement.num_devices == cluster devices.
  // Throws InputError if some op never runs.
  const SimResult& simulate(const Placement& placement, ExecutionTrace* trace = nullptr);

  // Start and end time of every op in the latest simulation.
  const std::vector<double>& start_us() const;
  const std::vector<double>& end_us() const;
  const SimResult& last_result() const;

  // Peak memory costs about a third of a simulation.  When off (and the cluster sets no
  // memory capacity) peak_mem_bytes/param_bytes/over_capacity keep stale values.  Default on.
  void set_compute_memory(bool on) { compute_memory_ = on; }
  const Graph& graph() const { return graph_; }
  const Cluster& cluster() const { return cluster_; }

 private:
  // Pending release batches: all children of one parent made ready by one source (the
  // parent's own end for children on its device, or one bus transfer) become ready at the
  // same time.  Within a batch children are processed in byte order of their names, which is
  // exactly the reference's per-edge (parent name, child name) order: a batch never shares
  // (time, parent) with another pending batch (docs/SIMULATOR.md, "Implementation").
  // Key layout: [time bits:64 | parent name rank:32 | output index + 1 (0 = local):32].
  using Key = unsigned __int128;
  struct BusItem {
    double ready;
    uint64_t seq;
    double delay;
    NodeId src;
    int32_t out;
  };

  void push_release(double t, NodeId parent, int32_t out_plus_one);
  Key pop_release();
  void bus_push(int d, int32_t item);
  void bus_pop(int d);
  void set_pending(int resource, double t);
  void enqueue_device(int d, NodeId v, double t);
  void release_children(NodeId v, int32_t out_plus_one, double now);
  void compute_memory(const Placement& p);

  const Graph& graph_;
  const Cluster& cluster_;
  // The heterogeneous mode runs the general event loop (sim/hetero_simulator.h).
  std::unique_ptr<HeteroSimulator> hetero_;
  // Per node: child node ids and output indices, sorted by child name rank.
  std::vector<int32_t> rchild_offset_;
  std::vector<NodeId> rchild_;
  std::vector<int32_t> rchild_out_;
  std::vector<NodeId> node_of_rank_;
  std::vector<Key> releases_;  // binary min-heap
  // Next run time of each resource: [0, D) buses, [D, 2D) devices; +inf when idle.  At equal
  // times a lower index goes first, which is the reference's (bus < device, then device id).
  std::vector<double> pending_;
  std::vector<int> tree_;
  size_t tree_leaves_ = 2;
  bool compute_memory_ = true;
  std::vector<std::vector<NodeId>> dev_fifo_;
  std::vector<size_t> dev_head_;
  std::vector<std::vector<Key>> bus_heap_;
  std::vector<BusItem> bus_items_;
  std::vector<int32_t> satisfied_;
  std::vector<int32_t> group_out_;  // scratch: output indices of the current op's transfers
  std::vector<double> start_, end_;
  std::vector<NodeId> run_order_;  // ops in the order they started
  std::vector<double> floor_cost_, last_use_;
  std::vector<std::vector<std::pair<double, int64_t>>> live_;  // per device: (free time, bytes)
  std::vector<int64_t> mem_cur_;
  uint64_t seq_ = 0;
  const Placement* placement_ = nullptr;
  SimResult result_;
};

}  // namespace placeto
