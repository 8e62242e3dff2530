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
  double final_runtime_us = 0;  // runtime of the final placement
  double final_objective_us = 0;
  bool final_memory_ok = true;  // the final placement fits every device's memory
  Placement final_placement;    // what the actions made (training and imitation tests)
  // The best placement seen, the start included (PlacementEnv::best_placement): what a
  // policy returns, so that it never ends worse than it started.
  Placement best_placement;
  double best_runtime_us = 0, best_objective_us = 0;
  double best_score = 0;  // PlacementEnv::best_score
  bool best_memory_ok = true;
  int moves = 0;  // steps that put their op on another device than it was on
  double sim_seconds = 0, policy_seconds = 0;  // time split of the episode
  int steps() const { return static_cast<int>(actions.size()); }
  // Return from each step on: sum of later rewards weighted by discount^(distance).
  std::vector<double> returns(double discount = 1.0) const;
};

// kForced: the device of the current node is read from `forced` (a teacher's placement),
// for imitation; the policy still runs so that its features are recorded.
enum class ActionMode { kSample, kGreedy, kForced };

// Runs one episode.  `rng` drives sampling and the environment's random starts.
EpisodeRecord run_episode(PolicyNet& policy, const GraphTensors& gt, PlacementEnv& env,
                          std::mt19937_64& rng, ActionMode mode, bool keep_features = true);

// Runs one episode in each of `envs` (all over the graph of `gt`) in lockstep: step t of
// every episode goes through one batched forward, which costs little more than a single one
// on graphs of a few hundred ops.  Random draws are taken environment by environment within
// each step, so results depend on the order of `envs` but are reproducible.
std::vector<EpisodeRecord> run_episodes(PolicyNet& policy, const GraphTensors& gt,
                                        const std::vector<PlacementEnv*>& envs,
                                        std::mt19937_64& rng, ActionMode mode,
                                        bool keep_features = true,
                                        const std::vector<int32_t>* forced = nullptr);

// Samples from softmax(logits) with our own engine, for run-to-run reproducibility.
int sample_from_logits(const float* logits, int n, std::mt19937_64& rng);

}  // namespace placeto
