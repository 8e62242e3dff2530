// The Placeto decision process over one graph (the environment of the RL agent).
//
// State: the graph with a complete current placement.  Each step visits the next node in a
// fixed order (topological by default), the agent picks its device, the placement is
// simulated, and the reward is the runtime improvement made by the step, in units of the
// episode's starting runtime (so returns are comparable across graphs whose runtimes differ
// by orders of magnitude).  No torch here.  Not thread-safe: one environment per thread.
//
// The objective (what rewards are made of, objective_us()):
//  - On a cluster with memory capacities (any device's memory_bytes > 0): the memory rule of
//    sim/placers/memory_rule.h as one bounded number.  A placement that fits scores its
//    runtime; one that does not scores U * (1 + log2(memory_rule_score(overflow, runtime)) -
//    50), where U (fit_bound_us()) is an upper bound on the runtime of any placement, computed
//    once per environment: 2 x (the sum over ops of the op's slowest compute time plus its
//    gap, plus the sum over edges of the slowest transfer between two different devices, its
//    arrival and its bus time, plus the start offset).  memory_rule_score is above 2^50
//    exactly for placements that do not fit, and its log2 - 50 grows about 8 x the largest
//    relative overflow (up to about 512), so every placement that does not fit scores above
//    U, every placement that fits below it, and the objective never decreases when the
//    rule's score increases: it orders placements as the rule does (fits first, then the
//    smaller overflow, then the shorter step).  Two placements that do not fit and whose
//    overflows fall in the same grid cells of the rule may tie when their steps are close
//    (the double's resolution at that size: rule scores within about 1e-13 of each other);
//    the best placement of an episode is tracked with the rule's exact score, so it follows
//    the rule exactly.
//    env.memory_penalty_s_per_gb is not used on such a cluster (the training config refuses
//    a penalty together with capacities: learner/train_config.h).
//  - On a cluster without capacities: the runtime, plus the reference's optional memory
//    penalty penalty_s_per_gb * max(0, peak_GB - max_mem_gb), with runtimes in seconds as in
//    the reference implementation.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "common/enum_names.h"
#include "sim/cluster.h"
#include "sim/coarsen.h"
#include "sim/graph.h"
#include "sim/simulator.h"

namespace placeto {

// The start placement of an episode (config key env.start): "fixed_random" (one random
// placement per graph, fixed by the seed; the reference default), "all_zero", "random" (a new
// random placement every episode), "placer:NAME" (the placement of a fast classical placer,
// e.g. "placer:m-etf", seeded by start_seed, devices named canonically) or "placer:best" (the
// best of the fast placers on each graph, as anneal starts): the policy then refines a
// classical placement.
enum class StartKind { kFixedRandom, kAllZero, kRandom, kPlacer };
struct EpisodeStart {
  StartKind kind = StartKind::kFixedRandom;
  std::string placer;  // kPlacer: a fast placer's registry name, or "best"
  bool operator==(const EpisodeStart& o) const { return kind == o.kind && placer == o.placer; }
};
// Parses the text above once; anything else throws InputError naming `source`, env.start and
// the allowed values (the fast placers' names for placer:NAME).
EpisodeStart parse_episode_start(const std::string& text, const std::string& source);
std::string episode_start_name(const EpisodeStart& start);

// Node order (env.order): the graph's topological order, or a new random one per episode.
enum class NodeOrder { kTopo, kRandom };
inline constexpr EnumName<NodeOrder> kNodeOrderNames[] = {{NodeOrder::kTopo, "topo"},
                                                          {NodeOrder::kRandom, "random"}};

// Reward (env.reward).  kStep: r_t = R_{t-1} - R_t, the runtime the step saved (the
// reference); a move that a later step repairs costs its damage now and earns it back later.
// kIncumbent: r_t = max(0, best_{t-1} - R_t), only what improves on the best placement seen in
// the episode (the start included), so exploratory moves are not punished and the return is
// the improvement of the best placement, the one a policy returns.
enum class RewardKind { kStep, kIncumbent };
inline constexpr EnumName<RewardKind> kRewardNames[] = {{RewardKind::kStep, "step"},
                                                        {RewardKind::kIncumbent, "incumbent"}};

// What one step places (env.action).  kOp: one op (the reference).  kOpGroup: a forward op
// together with its training ops ("<op>/grad", "<op>/update", "<op>/grad_sum";
// training_op_groups in sim/coarsen.h): the episode visits each group once, at its first op
// along the order, and the chosen device applies to the whole group.  kCoarse: groups from
// sim/coarsen.h's coarsen(), level by level (env.levels, coarse to fine): a level of k ops
// per group places num_ops / k groups, a level of 1 places single ops, so an episode moves
// whole regions first and refines them after, as a multilevel partitioner does.  Rewards
// always come from simulating every op.
enum class ActionUnit { kOp, kOpGroup, kCoarse };
inline constexpr EnumName<ActionUnit> kActionUnitNames[] = {
    {ActionUnit::kOp, "op"}, {ActionUnit::kOpGroup, "op_group"}, {ActionUnit::kCoarse, "coarse"}};

struct EnvConfig {
  EpisodeStart start;
  ActionUnit action = ActionUnit::kOp;
  NodeOrder order = NodeOrder::kTopo;
  // 0 = off; the reference suggests 2.  Only on clusters without memory capacities.
  double memory_penalty_s_per_gb = 0;
  double max_mem_gb = 8;
  bool normalize_reward = true;  // divide rewards by the starting runtime
  RewardKind reward = RewardKind::kStep;
  uint64_t start_seed = 1234;  // seed of the fixed random start placement
  // Passes over the ops per episode (env.passes): the order is walked this many times, so a
  // later pass revisits ops that were placed while the rest of the graph was still at the
  // start.  1 is the reference.
  int passes = 1;
  // action coarse: the levels, coarse to fine, as ops per group (each walked `passes` times).
  std::vector<int> levels{4};
};

// Throws InputError naming `source` and the field when a value is not allowed.
void validate_env_config(const EnvConfig& c, const std::string& source);

// Renames the devices of `device` (one entry per node) in the order of their first use along
// the topological order, so that placements equal up to a permutation of interchangeable
// devices get the same names.  Leaves heterogeneous clusters' placements alone.
void canonical_device_names(const Graph& g, const Cluster& cluster, std::vector<int32_t>* device);

// What moving the current step to a device does to memory (PlacementEnv::what_if_devices).
struct WhatIfMemory {
  // That device's headroom after the move, (cap - need) / cap, clamped to [-1, 1]; 1 when the
  // device has no capacity.
  double headroom = 1;
  // The change of the total relative overflow, sum over devices of max(0, need - cap) / cap,
  // that the move makes, clamped to [-1, 1]; 0 on a cluster without capacities.
  double overflow_change = 0;
};

// Episodes on a coarsened graph with rewards from the graph it was coarsened from (issue #34:
// training on large graphs): the steps, features and placements are the coarse graph's, and
// every simulation (rewards, what-ifs, memory) runs on the fine graph with each op on its
// group's device.  start_us() then gives each group the earliest start of its ops.
struct FineView {
  const Graph* graph = nullptr;                 // the fine graph; nullptr: no fine view
  const std::vector<int32_t>* group = nullptr;  // per fine op, its node of the coarse graph
};

// The coarse graph of a hierarchical episode over `g` (issue #34), shared by placement and
// training.  With a placer start (env.start: placer:NAME) the start is placed on the whole
// graph ("best" leaves m-etf out above kTimedStartSkipOps ops, as a timed search's start does)
// and the coarsening keeps its devices apart, so `start` is exactly that placement on the
// groups and `env` starts every episode there (set_fixed_start); otherwise `start` is empty
// and `env` is the given one.
struct CoarseEpisode {
  CoarseGraph coarse;
  std::optional<Placement> start;
  EnvConfig env;
};
CoarseEpisode coarse_episode(const Graph& g, const Cluster& cluster, const EnvConfig& env,
                             int groups);

class PlacementEnv {
 public:
  // Keeps references to graph and cluster (and to what `fine` points at).
  PlacementEnv(const Graph& graph, const Cluster& cluster, EnvConfig config, FineView fine = {});

  // Starts an episode; `rng` supplies random start placements / orders when configured.
  void reset(std::mt19937_64& rng);
  bool done() const { return step_ >= static_cast<int>(order_.size()); }
  int step_index() const { return step_; }
  // The op of the current step (with groups: the first op of the step's group).
  NodeId current_node() const { return order_[step_]; }
  // The ops that the current step places: its op, or its whole group.  REQUIRES: !done().
  std::vector<NodeId> current_ops() const;
  // The ops the steps visit, in order: every op, or one op per group, `passes` times.
  const std::vector<NodeId>& order() const { return order_; }
  // Places the current step's op (with groups: its whole group) on `device`, simulates,
  // returns the reward.
  double step(int device);

  const Placement& placement() const { return placement_; }
  // The placement every episode starts from (unused when start is "random").
  const Placement& fixed_start() const { return fixed_start_; }
  // Replaces it (hierarchical placement: the coarse image of a placement of the fine graph).
  // REQUIRES: a placement of graph() on this cluster.
  void set_fixed_start(Placement p);
  const std::vector<int32_t>& visited() const { return visited_; }
  // Start time of every op in the latest simulation.
  const std::vector<double>& start_us() const {
    return fine_.graph ? coarse_start_ : sim_.start_us();
  }
  double start_runtime_us() const { return start_runtime_; }
  // The best placement seen in this episode, the start included: by the memory rule on a
  // cluster with capacities (exactly, with memory_rule_score), else placements that fit
  // every device's memory first, then the lowest objective; the earliest of equals.
  Placement best_placement() const;
  double best_objective_us() const { return best_objective_; }
  // What best_placement() was chosen by: the memory rule's exact score (memory_rule_score)
  // with capacities, else the objective.  Lower is better, across episodes too.
  double best_score() const { return best_score_; }
  double best_runtime_us() const { return best_runtime_; }
  bool best_memory_ok() const { return best_memory_ok_; }
  int best_step() const { return best_step_; }  // steps taken when it was reached
  double current_runtime_us() const { return runtime_; }
  // The objective used for rewards (see the top of this file), microseconds.
  double objective_us() const { return objective_; }
  // True when the cluster has memory capacities: the objective follows the memory rule.
  bool memory_rule() const { return memory_rule_; }
  // U: an upper bound on the runtime of any placement (0 when !memory_rule()).
  double fit_bound_us() const { return fit_bound_us_; }
  const Graph& graph() const { return graph_; }
  const Cluster& cluster() const { return cluster_; }
  int num_devices() const { return cluster_.num_devices(); }
  const SimResult& last_sim() const { return main_sim().last_result(); }
  // The graph that simulations run on: the fine graph of a FineView, else graph().
  const Graph& simulated_graph() const { return fine_.graph ? *fine_.graph : graph_; }

  // What-if of the current step: out[d] is the objective (microseconds, as objective_us())
  // of the current placement with the current step's op, or group, moved to device d.  Runs
  // on a second simulator, so start_us() and last_sim() stay those of the current placement.
  // When `memory` is given, (*memory)[d] says what that move does to memory (WhatIfMemory).
  // Const like a cache: it changes only that simulator's scratch.  REQUIRES: !done().
  void what_if_devices(std::vector<double>* out, std::vector<WhatIfMemory>* memory = nullptr) const;

 private:
  double evaluate();  // simulates the current placement, returns the objective in us
  Simulator& main_sim() { return fine_sim_ ? *fine_sim_ : sim_; }
  const Simulator& main_sim() const { return fine_sim_ ? *fine_sim_ : sim_; }
  // `p` on the simulated graph: p itself, or with a FineView each op on its group's device
  // (written to *scratch).
  const Placement& simulated(const Placement& p, Placement* scratch) const;
  // The objective of r (see the top of this file), us.  `score`, when given, receives the
  // memory rule's exact score of r (memory_rule_score) with capacities, else the objective.
  double objective_of(const SimResult& r, double* score = nullptr) const;
  // Sum over devices with a capacity of max(0, need - cap) / cap.
  double total_relative_overflow(const SimResult& r) const;
  void note_if_best();
  // Places the ops of step t: its op alone, or its group.
  void place_step(Placement* p, int t, int32_t device) const;
  // The steps of an episode (order_, step_group_): `passes` walks of every unit of each level,
  // shuffled per walk when `rng` is given (env.order: random).
  void build_order(std::mt19937_64* rng);

  const Graph& graph_;
  const Cluster& cluster_;
  EnvConfig config_;
  Simulator sim_;
  Placement fixed_start_;
  Placement placement_;
  std::vector<NodeId> order_;                 // the op of each step
  std::vector<int32_t> step_group_;           // groups: the group of each step
  std::vector<std::vector<NodeId>> members_;  // groups: the ops of each group, topological
  std::vector<std::vector<int32_t>> levels_;  // groups: each level's groups, by first op
  std::vector<int32_t> visited_;
  int step_ = 0;
  double start_runtime_ = 0, runtime_ = 0, objective_ = 0, start_objective_ = 0;
  double score_ = 0;             // objective_of's score of the current placement
  Placement start_placement_;    // this episode's start
  std::vector<int32_t> chosen_;  // the device of each step so far
  double best_objective_ = 0, best_runtime_ = 0, best_score_ = 0;
  bool best_memory_ok_ = true;
  bool memory_rule_ = false;  // the cluster has capacities
  double fit_bound_us_ = 0;   // U
  int best_step_ = 0;
  // what_if_devices' simulator (made on first use) and placement scratch.
  mutable std::unique_ptr<Simulator> what_if_sim_;
  mutable Placement what_if_placement_;
  FineView fine_;
  std::unique_ptr<Simulator> fine_sim_;  // with a FineView: simulates the fine graph
  Placement fine_placement_;
  mutable Placement fine_what_if_;
  std::vector<double> coarse_start_;  // with a FineView: per group, its ops' earliest start
};

}  // namespace placeto
