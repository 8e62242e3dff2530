// Loading a trained policy from a checkpoint for placement and evaluation, placing a graph
// with it (greedy, or the best of k sampled episodes), and registering the learned placers
// (actors/policy_placer.h) in the placer registry.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "actors/policy.h"
#include "actors/policy_placer.h"
#include "learner/train_config.h"
#include "sim/cluster.h"
#include "sim/graph.h"

namespace placeto {

struct LoadedPolicy {
  std::string path;  // the checkpoint file actually read
  TrainConfig config;
  PolicyNet net{nullptr};
};

// `path`: a checkpoint file, a checkpoints directory, or its LATEST pointer (the newest intact
// checkpoint is used).  Throws InputError naming the file.
// `overrides`: "key=value" changes of the checkpoint's config (PlacerOptions::
// checkpoint_overrides).
LoadedPolicy load_policy(const std::string& path, const std::vector<std::string>& overrides = {});

// The hierarchical-placement settings of a checkpoint's config (policy.coarse_above, ...).
HierarchyOptions hierarchy_options(const TrainConfig& c);

// Places `g` zero-shot (place_with_network): the greedy episode, and when samples > 1 also
// samples - 1 sampled episodes, keeping the best placement seen (feasible first).  Throws
// InputError if the cluster's device count differs from the model's.
PolicyPlacement place_with_policy(LoadedPolicy& policy, const Graph& g, const Cluster& cluster,
                                  int samples, uint64_t seed);

// The same with a network in memory (the trainer's periodic evaluation); `config` supplies
// the environment and message-passing settings the network was trained with.
PolicyPlacement place_with_net(PolicyNet& net, const TrainConfig& config, const Graph& g,
                               const Cluster& cluster, int samples, uint64_t seed);

// Builds one of policy_placer_catalog()'s placers (policy_catalog.h); it loads its checkpoint.
std::unique_ptr<Placer> make_policy_placer_by_name(const std::string& name,
                                                   const PlacerOptions& options);

// Adds "policy" and "policy+anneal" (kind learned, options.checkpoint required) to the placer
// registry; each loads its checkpoint once, when it is built.  Idempotent.  Call it at the
// start of every program that places with policies (placeto, placeto_actor, tests).
void register_policy_placers();

}  // namespace placeto
