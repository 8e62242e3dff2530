// Memory capacity for placers: a cheap ledger that placers consult while they build a
// placement, and a repair pass that fixes a finished placement using the simulator's exact
// memory model.
//
// The ledger's estimate for an op is its parameters plus all its outputs, kept for the whole
// step: an upper bound on what the op adds to its device's simulated peak, so a placement
// the ledger accepts is usually feasible (the simulator has the final word).
//
// Threading: plain values and functions; a ledger belongs to one placer call.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <vector>

#include "sim/cluster.h"
#include "sim/graph.h"
#include "sim/simulator.h"

namespace placeto {

// Device d's capacity in bytes, +infinity when the cluster gives it none.
double device_capacity_bytes(const Cluster& c, int d);

// The graph's need on one device: its parameters plus the simulated peak of its live
// activations when every op runs on one device (the `single` placement of `placeto sim`).
int64_t single_device_bytes(const Graph& g);

// `c` with every device's capacity set to factor x single_device_bytes(g) / D, the capped
// clusters of issue #33 (factor 1: exactly the balanced share; below 1 nothing can fit).
// InputError unless factor is finite and > 0.
Cluster with_balanced_capacity(Cluster c, const Graph& g, double factor);

// param_bytes + total_out_bytes.
int64_t op_footprint_bytes(const Graph& g, NodeId v);

class MemoryLedger {
 public:
  MemoryLedger(const Graph& g, const Cluster& c);
  // True when the cluster gives `d` no capacity or v's footprint still fits on it.
  bool fits(NodeId v, int d) const;
  void add(NodeId v, int d) { used_[d] += op_footprint_bytes(g_, v); }
  // Remaining bytes on d (infinite when unlimited).
  double free_bytes(int d) const;
  // The device with the most free bytes (lowest index on ties): where an op goes when it fits
  // nowhere, so that the overflow stays as small as the ledger can make it.
  int roomiest_device() const;

 private:
  const Graph& g_;
  std::vector<double> capacity_;  // +inf when unlimited
  std::vector<int64_t> used_;
};

// When the cluster has capacities and `p` overflows some device in simulation, moves ops off
// the overflowing devices until the simulator says it fits or no move helps: each step tries
// the 8 largest unmoved ops of the most overflowing device on every device with room left,
// simulates each, and keeps the move that removes the most overflow (then the fastest).  Each
// op moves at most once.  Deterministic, unless `deadline` is given: then no step starts after
// it, and a step under way when it passes is dropped (the placement is left as the steps
// before it made it).  Returns the final SimResult::memory_ok.  `sim` must be bound to g and c.
using RepairDeadline = std::optional<std::chrono::steady_clock::time_point>;
bool repair_memory(const Graph& g, const Cluster& c, Simulator& sim, Placement* p,
                   const RepairDeadline& deadline = std::nullopt);
// Convenience: builds a Simulator when the cluster has capacities; no-op otherwise.
bool repair_memory(const Graph& g, const Cluster& c, Placement* p,
                   const RepairDeadline& deadline = std::nullopt);

}  // namespace placeto
