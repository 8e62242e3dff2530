// Coarsening a graph into at most K groups of ops, and mapping a placement of the groups back
// to every op.  Placeto places grouped graphs (a few hundred nodes); large imported graphs are
// coarsened the same way.  Merges keep the group graph acyclic, costs and parameters add, and
// the tensors cut by the grouping become the coarse graph's edges (docs/FAMILIES.md states
// the heuristic).  Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/graph.h"

namespace placeto {

struct CoarseGraph {
  Graph graph;                 // one node per group, in a topological order of the groups
  std::vector<int32_t> group;  // per original op: its node in `graph`
};

// Graphs above this many ops are coarsened window by window, level by level (coarsen()).
inline constexpr int kCoarsenWindowOps = 1024;
inline constexpr int kCoarsenLevelFactor = 8;

// Groups ops by greedy contraction of edges in order of bytes carried per microsecond of
// compute of the two groups, under a cost cap that starts at total cost / K and doubles when
// no merge fits; a merge is taken only if
// the group graph stays acyclic.  When no edge can be contracted, consecutive groups of a
// topological order are merged (always acyclic).  Above kCoarsenWindowOps ops it is
// multilevel: each level cuts the topological order of the graph so far into windows of at
// most that many ops and contracts each window alone to its share of 1/kCoarsenLevelFactor of
// its ops (an acyclic check inside a window costs the window's size, not the graph's), until
// the groups fit one window; the last level contracts them to max_nodes.  The time grows
// linearly with the graph.  With `label` (one per op; e.g. the devices of a placement), ops of
// different labels never share a group, so a placement constant on the labels is one of the
// coarse graph's; then more than max_nodes groups may remain, when no two groups of one label
// can merge.  REQUIRES: max_nodes >= 1.
CoarseGraph coarsen(const Graph& g, int max_nodes, const std::vector<int32_t>* label = nullptr);

// The naive baseline: the topological order cut into `k` runs of (nearly) equal op counts.
CoarseGraph chunk_topological(const Graph& g, int k);

// The coarse graph of any acyclic grouping (group ids in [0, k), every id used).  Each group
// gets one output per distinct set of cut tensors it sends (a tensor read by several groups
// is one output), so the compatible simulator sends a shared tensor once, as it would
// ungrouped.  Throws InputError if the grouping is cyclic.
CoarseGraph build_coarse_graph(const Graph& g, const std::vector<int32_t>& group, int k);

// One group id per op: a forward op together with its training ops, the ops named
// "<op>/grad", "<op>/update" and "<op>/grad_sum" (a move of the group is the "op with its
// gradient and update" action).  Ops without such relatives are groups of their own.
std::vector<int32_t> training_op_groups(const Graph& g);

// The ops of each group of a per-op group id (any ids, e.g. training_op_groups or a
// coarsening's): groups numbered in order of their first op, members in op order.
struct GroupMembers {
  std::vector<std::vector<NodeId>> members;  // group -> its ops
  std::vector<int> index;                    // op -> its group
};
GroupMembers group_members(const std::vector<int32_t>& group_of_op);

// The forward chains of a graph, in units of training_op_groups: a group's forward op is its
// member without a training suffix (in a group of training ops only, its first member in
// topological order); the edges between forward ops are the forward edges; a group whose
// forward op has exactly one forward parent group, which has no other forward child group,
// continues that parent's chain; every other group starts a chain.  A layer stack is one chain;
// parallel branches are chains of their own, and their fork and join ops start chains.  Every op is
// in exactly one chain (a graph without training ops has chains of single ops).
struct ForwardChains {
  std::vector<std::vector<std::vector<NodeId>>> chains;  // chain -> position -> its group's ops
  std::vector<int32_t> chain;                            // per op: its chain
  std::vector<int32_t> position;                         // per op: its group's place in it
};
ForwardChains forward_chains(const Graph& g);

// Bytes crossing groups: each tensor (op, output) counted once per other group reading it.
int64_t cut_bytes(const Graph& g, const std::vector<int32_t>& group);

// Every op gets the device of its group.  REQUIRES: coarse placement for c.graph.
Placement ungroup(const CoarseGraph& c, const Placement& coarse);

// The group map file that records a coarsening, and its reader: sim/coarse_map.h.

}  // namespace placeto
