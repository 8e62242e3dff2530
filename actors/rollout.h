// Running placement episodes with the policy: the actor's inner loop.  Each step builds the
// features of the current state, runs the policy forward (no autograd), picks a device
// (sampled, or the argmax in greedy mode) and steps the environment.  The features, current
// nodes and actions are kept so that the learner can recompute every step's log-probability
// in one batched forward.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "actors/environment.h"
#include "actors/policy.h"

namespace placeto {

struct EpisodeRecord {
  int graph_index = -1;
  int num_nodes = 0, width = 0;
  std::vector<float> features;   // [T, N, F]
  std::vector<int64_t> current;  // [T]
  std::vector<int64_t> actions;  // [T]
  std::vector<double> rewards;   // [T], normalised by the start runtime
  double start_runtime_us = 0;
  double final_runtime_us = 0;   // runtime of the final placement
  double final_objective_us = 0;
  Placement final_placement;
  double sim_seconds = 0, policy_seconds = 0;  // time split of the episode
  int steps() const { return static_cast<int>(actions.size()); }
  // Undiscounted return from each step on.
  std::vector<double> returns() const;
};

enum class ActionMode { kSample, kGreedy };

// Runs one episode.  `rng` drives sampling and the environment's random starts.
EpisodeRecord run_episode(PolicyNet& policy, const GraphTensors& gt, PlacementEnv& env,
                          std::mt19937_64& rng, ActionMode mode, bool keep_features = true);

// Samples from softmax(logits) with our own engine, for run-to-run reproducibility.
int sample_from_logits(const float* logits, int n, std::mt19937_64& rng);

}  // namespace placeto
