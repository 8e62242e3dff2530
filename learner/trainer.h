// The training loop, shared by the single-process command (`placeto train`) and the MPI
// trainer (`placeto_actor`): every rank runs episodes on graphs of the train split with the
// current policy and computes REINFORCE gradients; gradients are averaged over ranks with
// the Collective; every rank applies the same Adam update to the same flat parameter vector,
// so all ranks hold identical parameters without a broadcast (docs/TRAINING.md).
//
// Reproducibility: each rank's random engine is re-seeded at every iteration from
// (seed, rank, iteration), baselines are updated from all ranks' returns in rank order, and
// the all-reduce is deterministic, so a run is bit-reproducible for a fixed world size, and
// resuming from a checkpoint continues it exactly.  Not thread-safe.
#pragma once

#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "actors/environment.h"
#include "actors/policy.h"
#include "common/comm/comm.h"
#include "learner/baselines.h"
#include "learner/train_config.h"
#include "sim/coarsen.h"
#include "sim/graph_set.h"
#include "training/adam.h"

namespace placeto {

// Everything needed to continue a run exactly (what a checkpoint holds).
struct TrainerState {
  int64_t iteration = 0;  // iterations completed
  int64_t episodes = 0;   // episodes completed, all ranks
  int world_size = 1;
  std::vector<float> params;
  std::vector<float> exp_avg, exp_avg_sq;
  int64_t adam_step = 0;
  BaselineStore baselines;
  double wall_seconds = 0;  // training time so far, across restarts
  // The learning rate runs linearly from lr_from_value at iteration lr_from_iteration to
  // lr_final at iteration lr_to_iteration - 1.  A new run: (0, lr, iterations).  A resumed
  // run whose `iterations` changed continues from the rate it had (Trainer::restore), so the
  // rate never jumps back up.  lr_to_iteration 0: not set yet.
  int64_t lr_from_iteration = 0, lr_to_iteration = 0;
  double lr_from_value = 0;
  // The warm-start policy's parameters for the KL term (kl_coef > 0): those at the hand-over
  // from imitation; empty before it.  Checkpointed as /schedules/kl_reference.
  std::vector<float> kl_reference;
};

// The learning rate of iteration `it` under the schedule of `s`.
double scheduled_lr(const TrainerState& s, double lr_final, int64_t it);

struct IterationStats {
  int64_t iteration = 0;
  double mean_runtime_us = 0, best_runtime_us = 0, mean_ratio = 0;  // ratio: final / start
  double baseline = 0, entropy = 0, loss = 0, grad_norm = 0, lr = 0;
  // Whether the run learns (docs/TRAINING.md): advantages before normalisation, the fraction
  // of steps that moved their op, the best placement seen / start, and the cosine between
  // the gradients of the two halves of each rank's batch (NaN with one episode per rank).
  double adv_mean = 0, adv_sd = 0, move_fraction = 0, best_ratio = 0, grad_cosine = 0;
  // PPO's value-head error and share of steps whose ratio was clipped (first pass), and the
  // mean KL to the warm-start policy (0 when off).
  double value_loss = 0, clip_fraction = 0, kl = 0;
  double episodes_per_s = 0, allreduce_s = 0, iteration_s = 0, sim_s = 0, policy_s = 0;
};

PolicyConfig make_policy_config(const TrainConfig& c);

class Trainer {
 public:
  // Train graph i runs on cluster_for_graph(config, cluster, graph, i) (train_config.h).  A
  // train graph above policy.coarse_above ops is coarsened to at most policy.coarse_groups
  // groups: its episodes place the groups, with rewards simulated on the graph itself
  // (FineView, actors/environment.h).
  Trainer(TrainConfig config, std::vector<NamedGraph> train, Cluster cluster, Communicator& comm);

  // Runs until `config.iterations` are done or `stop()` returns true at an iteration
  // boundary (it must return the same value on every rank).  `after_iteration` is called on
  // every rank after each iteration (checkpointing, metrics).
  void run(const std::function<bool()>& stop,
           const std::function<void(const IterationStats&)>& after_iteration);

  PolicyNet& policy() { return policy_; }
  const TrainConfig& config() const { return config_; }
  // The state, with params/Adam copied out (for checkpoints).
  TrainerState state();
  // Restores a state (params, Adam, baselines, counters).  Throws InputError when the
  // parameter count differs from this model's.
  void restore(const TrainerState& s);
  int64_t iteration() const { return state_.iteration; }

  // The engine of `rank` at the start of iteration `it`: seeded_engine() (common/rng.h, the
  // project's seeding scheme); checkpointable.
  static std::mt19937_64 iteration_engine(uint64_t seed, int rank, int64_t it);

 private:
  IterationStats iterate();
  // A new environment of train graph i (on its coarse graph when it has one).
  std::unique_ptr<PlacementEnv> make_env(size_t i) const;

  TrainConfig config_;
  std::vector<NamedGraph> train_;
  Cluster cluster_;
  // Per train graph, its cluster (cluster_for_graph: capped by env.memory_factors).  Filled
  // before any environment is made and never resized: the environments keep references.
  std::vector<Cluster> clusters_;
  Communicator& comm_;
  PolicyNet policy_{nullptr};
  PolicyNet ref_policy_{nullptr};  // the KL term's warm-start policy, frozen
  // Per train graph, its coarse episode (coarse_episode, actors/environment.h); null below
  // policy.coarse_above.
  std::vector<std::unique_ptr<CoarseEpisode>> coarse_;
  std::vector<GraphTensors> tensors_;
  std::vector<std::vector<std::unique_ptr<PlacementEnv>>> envs_;  // per graph
  Adam adam_;
  TrainerState state_;
  int max_steps_ = 0;                          // the longest episode's steps
  std::vector<std::vector<int32_t>> teacher_;  // per train graph, when imitating
};

// The placement `teacher` (a placer name) gives `g`, with devices renamed in the order of
// their first use along the topological order when the cluster's devices are
// interchangeable (compatible mode), so that equivalent placements get the same labels.
// With teacher "anneal" and a "placer:NAME" start in `env`, anneal starts from the episodes'
// start placement and keeps its device names (the policy learns to refine that placement).
std::vector<int32_t> teacher_placement(const std::string& teacher, const Graph& g,
                                       const Cluster& cluster, uint64_t seed,
                                       const EnvConfig& env = EnvConfig());

}  // namespace placeto
