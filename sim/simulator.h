// Discrete-event simulation of one training step of a placed graph.
//
// The compatible mode reproduces the Placeto paper's simulator exactly (docs/SIMULATOR.md
// states its rules): per-device compute queues, one outgoing transfer bus per device, events
// ordered by (time, kind, key).  The heterogeneous mode (Cluster::mode) adds per-device speeds,
// per-link bandwidth and latency and a queue per bus or per link; Simulator hands it to
// HeteroSimulator (sim/hetero_simulator.h) so that the compatible loop stays lean.  A Simulator is
// bound to one graph and cluster and reuses its buffers, so simulate() allocates nothing after the
// first call.  Not thread-safe: use one Simulator per thread.  What it produces, SimResult and
// ExecutionTrace, is declared in sim/sim_result.h.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "sim/cluster.h"
#include "sim/graph.h"
#include "sim/sim_result.h"

namespace placeto {

class HeteroSimulator;
class PeakMemory;

class Simulator {
 public:
  // Keeps references to `graph` and `cluster`: both must outlive the simulator.
  Simulator(const Graph& graph, const Cluster& cluster);
  // The simulator keeps references: temporaries would dangle (ASan found this twice).
  Simulator(Graph&&, const Cluster&) = delete;
  Simulator(const Graph&, Cluster&&) = delete;
  Simulator(Graph&&, Cluster&&) = delete;
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

  // Peak memory costs up to as much as the rest of a simulation.  When off (and the cluster
  // sets no memory capacity) peak_mem_bytes/param_bytes/over_capacity keep stale values.
  // Default on.
  void set_compute_memory(bool on) { compute_memory_ = on; }
  const Graph& graph() const { return graph_; }
  const Cluster& cluster() const { return cluster_; }

 private:
  // Release keys (docs/SIMULATOR.md, "Implementation"): the reference processes the release of
  // edge (u, w) at time t in the order (t, flag, a, rank(w)), where flag = 0, a = rank(u) for a
  // release made at an earlier time (all such are processed first at t, in name order) and
  // flag = 1, a = creation sequence for one made at time t itself (a zero-cost op or a 0-byte
  // transfer: it runs right after the event that made it).  An op is queued on its device
  // when its last in-edge is released, so device queues hold ops keyed by the largest key of
  // their in-edges and a device run takes the smallest key already released.
  // Layout: [time bits:64 | flag:1 | a:31 | name rank of the op:32].
  using Key = unsigned __int128;
  // On the exact path (exact_), a transfer whose arrival equals its start (a 0-byte tensor):
  // its releases are made at their own time, so they take a sequence number when the bus
  // reaches it, in event order.  Every other transfer is settled when its op runs.
  struct LazyTransfer {
    double start;
    NodeId src;
    int32_t slot;
    int32_t next;  // the next lazy transfer on the same bus, -1 if none
  };

  void schedule_device(int d, double t);
  void run_device(int d, double now, ExecutionTrace* trace);
  void run_bus(int d, double now);
  // Releases one in-edge of w at key (hi, lo); queues w on its device if it was the last.
  void release(NodeId w, uint64_t hi, uint64_t lo);
  // Sends output `slot` of v (on device d, ready at `ready`) to its children on other devices.
  // Returns the arrival time, or -1 for a lazy transfer.
  double start_transfer(int d, NodeId v, int32_t slot, double ready, ExecutionTrace* trace);
  bool note_made_now(double t);
  void dev_push(int d, Key key);
  Key dev_pop(int d);
  void set_pending(int resource, double t);

  const Graph& graph_;
  const Cluster& cluster_;
  // The heterogeneous mode runs the general event loop (sim/hetero_simulator.h).
  std::unique_ptr<HeteroSimulator> hetero_;
  std::unique_ptr<PeakMemory> peak_memory_;
  int num_dev_ = 0;
  // Per op, copied from the graph into flat arrays.
  std::vector<double> cost_;
  std::vector<int32_t> in_degree_, rank_;
  std::vector<NodeId> node_of_rank_;
  std::vector<NodeId> sources_;    // ops without inputs, in file order
  std::vector<NodeId> param_ops_;  // ops with parameters
  // Per child position of the graph's CSR (file order): the child, and its slot, a number for
  // each distinct (parent, output index) pair.
  std::vector<int32_t> child_offset_;
  std::vector<NodeId> child_;
  std::vector<int32_t> child_slot_;
  // Per slot: its children in edge order (slot_child_[slot_child_offset_[s] ..]), bytes,
  // output index and transfer time (bytes / transfer speed).
  std::vector<int32_t> slot_child_offset_;
  std::vector<NodeId> slot_child_;
  std::vector<double> slot_bytes_;
  std::vector<int32_t> slot_out_;
  std::vector<double> slot_delay_;
  double delay_speed_ = -1;  // the transfer speed slot_delay_ was computed for
  // Per simulation.
  const int32_t* dev_of_ = nullptr;  // the placement
  std::vector<int32_t> remaining_;   // per op: in-edges not yet released
  std::vector<Key> ready_key_;       // per op: largest key of its released in-edges
  // Device d's queue: a binary heap of keys at heap_[d * heap_stride_ ..] (see the constructor).
  std::vector<Key> heap_;
  size_t heap_stride_ = 0;
  std::vector<int32_t> heap_size_;
  bool heaps_dirty_ = false;
  // Per slot, while its op runs: when its transfer arrives (-1: lazy), valid when
  // slot_stamp_ holds the current simulation's number.
  std::vector<double> slot_arrive_;
  std::vector<uint32_t> slot_stamp_;
  std::vector<uint64_t> slot_lo_;  // per slot: the low half of its transfer's release keys
  // Made-now sources (0-byte transfers, ops that end when they start) are releases made at
  // their own time, ordered among themselves by a sequence number in event order.  Unless
  // exact_, 0-byte transfers are settled when their op runs, like the others, with number 0:
  // the same order as long as no two sources share a time (then clash_, and the simulation
  // runs again with exact_).  The times seen: a hash set, by round.
  bool always_exact_ = false;  // the graph has zero-cost ops
  int clash_score_ = 0;        // +4 per clash, -1 per simulation without one
  bool exact_ = true;
  bool clash_ = false;
  std::vector<uint64_t> made_now_bits_;
  std::vector<uint32_t> made_now_round_of_;
  uint32_t made_now_round_ = 0;
  uint32_t stamp_ = 0;
  std::vector<int32_t> lazy_head_, lazy_tail_;
  std::vector<LazyTransfer> lazy_;
  int32_t num_lazy_ = 0;
  // Next run time of each resource j: [0, D) buses (lazy transfers only), [D, 2D) devices;
  // +inf when idle.  At equal times a lower index goes first, which is the reference's (bus <
  // device, then device id).  A tournament tree over them: leaf L + j is resource j, each
  // inner node holds the winner of its two children (tree_) and the bits of its time
  // (tree_bits_).
  std::vector<int32_t> tree_;
  std::vector<uint64_t> tree_bits_;
  size_t tree_leaves_ = 2;
  double pending(int j) const;
  // When each resource's gap after its latest op or transfer ends.  A device runs next at
  // max(free_at_, when its queue head is released): the reference's run event at the end of a
  // gap that finds nothing to do is skipped (it only marks the resource idle or puts back a
  // transfer that is not ready); its time still counts for the runtime.
  std::vector<double> free_at_;
  bool compute_memory_ = true;
  bool memory_on_ = true;  // this simulation reports its ops to peak_memory_
  std::vector<double> start_, end_;
  int num_run_ = 0;  // ops started so far
  uint32_t seq_ = 0;
  double delta1_ = 0, delta2_ = 0;
  SimResult result_;
};

}  // namespace placeto
