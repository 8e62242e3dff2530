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

// Places `g`: the greedy episode, and when samples > 1 also samples - 1 sampled episodes
// (lockstep batches of 8), keeping the best placement seen in any episode, its start
// included, by the memory rule (sim/placers/memory_rule.h) when the cluster has capacities,
// else memory-feasible first, then the fastest.  `sweep`: the network's message passing
// uses topological levels.  REQUIRES: the cluster has the device count the network was built
// for.
PolicyPlacement place_with_network(PolicyNet& net, const EnvConfig& env, bool sweep, const Graph& g,
                                   const Cluster& cluster, int samples, uint64_t seed);

// What a learned placer needs besides the graph: the network and how it was trained.
struct LearnedPlacerSetup {
  PolicyNet net{nullptr};
  EnvConfig env;
  bool sweep = false;
  int devices = 0;     // the device count the policy was trained for
  std::string source;  // the checkpoint file, for messages
};

// "policy": the best of max(1, options.samples) episodes (1 = greedy), seeded by options.seed.
std::unique_ptr<Placer> make_policy_placer(LearnedPlacerSetup setup);
// "policy+anneal": "policy", then anneal started from its placement.  options.budget is
// anneal's; options.time_ms is the whole call's (anneal gets what the policy left of it).
std::unique_ptr<Placer> make_policy_anneal_placer(LearnedPlacerSetup setup);

}  // namespace placeto
