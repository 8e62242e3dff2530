// Loading a trained policy from a checkpoint for placement and evaluation, and placing a
// graph with it (greedy, or the best of k sampled episodes).
#pragma once

#include <string>

#include "actors/policy.h"
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
LoadedPolicy load_policy(const std::string& path);

struct PolicyPlacement {
  Placement placement;
  double runtime_us = 0;  // simulated
  double seconds = 0;     // wall time of placing
};

// Places `g` zero-shot: the greedy episode, and when samples > 1 also `samples` sampled
// episodes, keeping the fastest feasible one (by simulated runtime; infeasible ones only if
// nothing is feasible).  Throws InputError if the cluster's device count differs from the
// model's.
PolicyPlacement place_with_policy(LoadedPolicy& policy, const Graph& g, const Cluster& cluster,
                                  int samples, uint64_t seed);

// The same with a network in memory (the trainer's periodic evaluation); `config` supplies
// the environment and message-passing settings the network was trained with.
PolicyPlacement place_with_net(PolicyNet& net, const TrainConfig& config, const Graph& g,
                               const Cluster& cluster, int samples, uint64_t seed);

}  // namespace placeto
