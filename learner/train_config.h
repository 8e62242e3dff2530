// The training configuration: one plain struct with the reference's defaults, read from
// YAML (unknown keys are errors with "did you mean"), overridable by key=value arguments,
// and written back whole into every run directory.  No torch.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "actors/environment.h"
#include "actors/features.h"
#include "actors/message_passing.h"
#include "common/comm/comm.h"
#include "sim/cluster.h"
#include "sim/graph.h"

namespace placeto {

struct PolicyOptions {
  int hidden = 16;
  MessagePassing message_passing = MessagePassing::kRadial;
  int rounds = 8;
  bool parallel_aggregation = true;
  int parallel_k = 0;
  bool with_memory = false;  // memory feature column
  // What-if columns for the current step and a device-shared head on them (actors/features.h,
  // actors/policy.h): the policy sees what the simulator says each of its choices gives.
  bool lookahead = false;
  // Two more what-if columns per device (actors/features.h): the device's headroom after the
  // move and the change of the total relative overflow.  Requires lookahead.
  bool memory_features = false;
  // One network for any device count and cluster (actors/features.h, actors/policy.h): devices
  // are described by columns, not named by logits.  Requires lookahead.
  bool any_devices = false;
  // Hierarchical placement of graphs above coarse_above ops (0: never): the network places at
  // most coarse_groups groups, then the boundary pass spends at most boundary_sims whole-graph
  // simulations (HierarchyOptions, actors/policy_placer.h).  Checkpoints written before these
  // keys get the defaults.
  int coarse_above = 512;
  int coarse_groups = 64;
  int boundary_sims = 4096;
  bool fine_rewards = true;  // HierarchyOptions::fine_rewards
};

// The baseline subtracted from returns (key `baseline`).  kWindow: b_t = mean return at step
// t of the last `baseline_window` episodes of the same graph (the reference).  kLeaveOneOut:
// b_t = mean return at step t of the iteration's other episodes on the rank (same graph,
// start and policy; unbiased); needs episodes_per_iteration >= 2 (training/advantages.h).
enum class BaselineKind { kWindow, kLeaveOneOut };
inline constexpr EnumName<BaselineKind> kBaselineNames[] = {
    {BaselineKind::kWindow, "window"}, {BaselineKind::kLeaveOneOut, "leave_one_out"}};

// The policy-gradient algorithm (key `algorithm`).  kReinforce: the REINFORCE loss of
// learner/loss.h with the configured baseline.  kPpo: PPO's clipped surrogate with a value
// head on the policy's embedding, GAE(lambda) advantages from it, and ppo_epochs passes
// (gradient all-reduce and Adam step each) over every iteration's episodes.
enum class Algorithm { kReinforce, kPpo };
inline constexpr EnumName<Algorithm> kAlgorithmNames[] = {{Algorithm::kReinforce, "reinforce"},
                                                          {Algorithm::kPpo, "ppo"}};

struct TrainConfig {
  std::string family_dir;  // generated family (manifest.json) or a directory of graphs
  int devices = 3;         // D
  std::string cluster;     // optional cluster YAML; its device count must equal `devices`
  uint64_t seed = 1;
  int64_t iterations = 200;        // gradient updates
  int episodes_per_iteration = 1;  // per rank
  double lr = 1e-3;                // linearly decayed to lr_final
  double lr_final = 1e-4;
  double grad_clip = 1.25;  // global L2 norm
  double entropy_beta = 0.01;
  BaselineKind baseline = BaselineKind::kWindow;
  int baseline_window = 10;  // episodes per graph in the window baseline
  double discount = 1.0;     // return discount; 1 = undiscounted (the reference)
  // Centre each rank's advantages and scale them to unit standard deviation per iteration,
  // so that the entropy bonus weighs the same against the policy gradient on every family.
  // Off in the reference.
  bool normalize_advantages = false;
  Algorithm algorithm = Algorithm::kReinforce;
  int ppo_epochs = 4;        // passes over each iteration's episodes
  double ppo_clip = 0.2;     // the surrogate's ratio is clipped to [1 - clip, 1 + clip]
  double gae_lambda = 0.95;  // GAE(lambda); 1: returns minus the value (Monte Carlo)
  double value_coef = 0.5;   // weight of the value head's squared error
  // After imitation: kl_coef * KL(warm-start policy || policy) per step is added to the loss,
  // the warm-start policy being the one at the hand-over, so that RL keeps what it imitated
  // (both algorithms; 0 = off).
  double kl_coef = 0;
  // Imitation warm start (not in the reference): for the first `imitation_iterations`
  // iterations the loss is the cross-entropy between the policy and a classical placer's
  // placement of each train graph (`imitation_teacher`, a registry name from
  // sim/placers/placer.h, e.g. metis or anneal), on states the policy itself visits
  // (DAgger-style); REINFORCE takes over afterwards.  "" = off.
  std::string imitation_teacher;
  int64_t imitation_iterations = 0;
  int64_t checkpoint_every = 50;
  int keep_checkpoints = 3;
  int64_t eval_every = 0;  // test-split evaluation every N iterations; 0 = only at the end
  int eval_samples = 8;    // best-of-k sampled placements in evaluation
  CommBackend comm = CommBackend::kAuto;  // the MPI trainer's backend
  double collective_timeout_s = 300;      // a rank silent this long aborts the job
  std::string log_level = "info";
  PolicyOptions policy;
  EnvConfig env;
  // Key env.memory_factors: train graph i (and test graph i in the periodic evaluation) runs
  // on the cluster with every device's capacity set to memory_factors[i % n] x the graph's
  // balanced share (with_balanced_capacity of sim/placers/memory.h); a factor of 0 leaves
  // that graph's cluster as configured.  Empty (the default): every graph on the cluster.
  std::vector<double> memory_factors;
  // Key cluster_mix: train graph i (and test graph i in the periodic evaluation) runs on entry
  // (i / max(1, |memory_factors|)) % n, each entry a device count ("4": that many devices of
  // the default profile) or a cluster YAML file, so that both memory factors meet every
  // cluster.  Counts other than `devices` need policy.any_devices.  Empty: every graph on the
  // configured cluster.
  std::vector<std::string> cluster_mix;
};

// The cluster of graph i of a split: the cluster_mix entry of graph i (TrainConfig::cluster_mix)
// or `cluster` when there is none, capped by memory_factors[i % n] when that factor is > 0
// (TrainConfig::memory_factors).
Cluster cluster_for_graph(const TrainConfig& c, const Cluster& cluster, const Graph& g, size_t i);

// True when `text` is a device count (digits only) of cluster_mix; sets *count.
bool parse_device_count(const std::string& text, int* count);

// Reads `path`, applies `overrides` ("a.b=value"), validates.  Throws InputError.
TrainConfig load_train_config(const std::string& path, const std::vector<std::string>& overrides);
TrainConfig parse_train_config(const std::string& yaml_text, const std::string& source,
                               const std::vector<std::string>& overrides);
std::string train_config_to_yaml(const TrainConfig& c);

}  // namespace placeto
