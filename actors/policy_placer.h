// The learned policy as a placer: placing a graph zero-shot with a network (the greedy
// episode, or the best of k sampled episodes), and the Placer implementations that put the
// policy in the registry beside the classical methods (learner/policy_io.h registers them,
// loading the network from a checkpoint).
//
// Threading: a policy placer holds its network; use it from one thread at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "actors/environment.h"
#include "actors/policy.h"
#include "sim/cluster.h"
#include "sim/graph.h"
#include "sim/placers/placer.h"

namespace placeto {

struct PolicyPlacement {
  Placement placement;
  double runtime_us = 0;  // simulated
  double seconds = 0;     // wall time of placing
};

// Hierarchical placement of large graphs (policy.coarse_above, coarse_groups, boundary_sims).
// A graph of more than `above` ops is coarsened to at most `groups` groups (sim/coarsen.h),
// the network places the coarse graph (its episodes, lookahead and features all on the coarse
// graph, so a step costs what it costs at `groups` ops), and every op takes its group's device.
// Then the boundary pass: at most `boundary_sims` simulations of the whole graph, one per
// candidate move, over the units at a group boundary (an op with its /grad, /update and
// /grad_sum ops, training_op_groups), heaviest first; a unit's candidates are the devices of
// the ops across its group boundary and the device with the least compute, and it moves to
// the best of them when that improves the memory rule's score of the whole graph.  0 turns
// the pass off.  `above` = 0: never coarsen.
// The boundary pass simulates at most this many ops in all (boundary_sims whole-graph
// simulations, fewer on graphs above 2^22 / boundary_sims ops, about 1k ops by default), so
// its cost stays about constant as graphs grow.
inline constexpr int64_t kBoundaryOpSims = int64_t{1} << 22;

struct HierarchyOptions {
  int above = 512;
  int groups = 64;
  int boundary_sims = 4096;
  // The coarse episode's rewards and what-ifs simulate the whole graph (FineView of
  // actors/environment.h), as in training, instead of the coarse graph.
  bool fine_rewards = true;
};

// Places `g`: the greedy episode, and when samples > 1 also samples - 1 sampled episodes
// (lockstep batches of 8), keeping the best placement seen in any episode, its start
// included, by the memory rule (sim/placers/memory_rule.h) when the cluster has capacities,
// else memory-feasible first, then the fastest.  `sweep`: the network's message passing
// uses topological levels.  Graphs above hierarchy.above ops are placed hierarchically (above).
// REQUIRES: net->places(cluster.num_devices()).
PolicyPlacement place_with_network(PolicyNet& net, const EnvConfig& env, bool sweep, const Graph& g,
                                   const Cluster& cluster, int samples, uint64_t seed,
                                   const HierarchyOptions& hierarchy = {});

// The boundary pass of HierarchyOptions over `p` (a placement of g whose ops were placed by
// `group`, one id per op), spending at most `max_sims` simulations.  Returns the moves kept.
int refine_group_boundaries(const Graph& g, const Cluster& cluster,
                            const std::vector<int32_t>& group, int max_sims, Placement* p);

// What a learned placer needs besides the graph: the network and how it was trained.
struct LearnedPlacerSetup {
  PolicyNet net{nullptr};
  EnvConfig env;
  bool sweep = false;
  int devices = 0;  // the device count the policy was trained for
  HierarchyOptions hierarchy;
  std::string source;  // the checkpoint file, for messages
};

// "policy": the best of max(1, options.samples) episodes (1 = greedy), seeded by options.seed.
std::unique_ptr<Placer> make_policy_placer(LearnedPlacerSetup setup);
// "policy+anneal": "policy", then anneal started from its placement.  options.budget is
// anneal's; options.time_ms is the whole call's (anneal gets what the policy left of it).
std::unique_ptr<Placer> make_policy_anneal_placer(LearnedPlacerSetup setup);

}  // namespace placeto
