// What the contiguous placers share (contiguous_placers.cc: `partition` and `m-topo`, and the
// fallback of `m-etf` and `m-sct`): the graph as a sequence of items, a forward op with its
// training ops, in topological order; and an estimate of the memory a set of items needs on
// one device, in the simulator's memory model.
//
// Items: training_op_groups (sim/coarsen.h) -- an op named X with X/grad, X/update and
// X/grad_sum -- ordered by the topological position of their first op, so that a contiguous
// run of items is a contiguous run of the forward pass with its backward ops, and every
// `/grad` and `/update` op lands on its forward op's device.
//
// Memory: one simulation of the whole graph on device 0 fixes a timeline; on it, an op's
// outputs are live from its start until the last of its children ends (the liveness rule of
// sim/peak_memory.h, without its integer rounding).  A set of items needs the largest sum of
// live outputs of its ops over the timeline plus its ops' parameters: the simulator's peak
// if the device ran those ops at the same times.  In a split the ops shift in time, so the
// estimate is checked by simulation afterwards.  Adding or removing an item costs
// O(outputs x log ops) (a max segment tree with range adds).
//
// Threading: plain values; one ItemMemory per thread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/cluster.h"
#include "sim/graph.h"
#include "sim/placers/placer.h"

namespace placeto {

struct OpSequence {
  std::vector<std::vector<NodeId>> items;  // in order; each item's ops in topological order
  std::vector<int32_t> item_of;            // per op
  int size() const { return static_cast<int>(items.size()); }
};
OpSequence training_op_sequence(const Graph& g);

// The memory a set of items needs on one device (see above).
class ItemMemory {
 public:
  // REQUIRES: `seq` is for `g`; both outlive this.
  ItemMemory(const Graph& g, const Cluster& c, const OpSequence& seq);
  void add(int item) { change(item, +1); }
  void remove(int item) { change(item, -1); }
  // Peak of live outputs plus parameters of the items added (and not removed).
  int64_t need_bytes() const;
  // need_bytes() with `item` added too, leaving the set as it was.
  int64_t need_with(int item);

 private:
  void change(int item, int sign);
  void range_add(int lo, int hi, int64_t x, int node, int node_lo, int node_hi);

  const Graph& g_;
  const OpSequence& seq_;
  std::vector<int32_t> live_lo_, live_hi_;  // per op: its live interval, in timeline slots
  int slots_ = 0;
  std::vector<int64_t> max_, add_;  // segment tree over the slots
  int64_t params_ = 0;
};

// The contiguous split with the lowest estimated step that fits every device by the estimate
// (docs/PLACERS.md, "partition"); when none fits, the split whose estimated needs exceed the
// capacities by the smallest common factor.  Checked by simulation: while the simulator finds a
// device over capacity, that device's capacity is lowered by the excess and the split redone
// (at most 4 times); the best placement by the memory rule is returned.
Placement contiguous_partition(const Graph& g, const Cluster& c);

// A placer's own answer, or partition's when the own one does not fit and partition's is
// better by the memory rule; then `stats->note` (when given) says so, naming `method`.
Placement fall_back_to_partition(const Graph& g, const Cluster& c, Placement own,
                                 const std::string& method, PlacerStats* stats);

}  // namespace placeto
