#include "actors/environment.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "common/error.h"
#include "common/rng.h"
#include "sim/coarsen.h"
#include "sim/placers/memory_rule.h"
#include "sim/placers/registry.h"
#include "sim/placers/search_util.h"

namespace placeto {

namespace {

constexpr char kPlacerStart[] = "placer:";
constexpr char kBestPlacer[] = "best";

// U of environment.h: 2 x (every op at its slowest plus its gap, every edge's slowest transfer
// between two different devices (arrival plus bus time), the start offset).  A transfer's
// time is affine in its bytes, so the slowest pair at 0 and at 2^30 bytes bounds every size.
double fit_bound(const Graph& g, const Cluster& c) {
  const int d = c.num_devices();
  double total = c.mode == SimMode::kCompatible ? c.compat.init_offset_us : 0.0;
  for (NodeId v = 0; v < g.num_nodes(); ++v) {
    double slowest = 0;
    for (int j = 0; j < d; ++j) slowest = std::max(slowest, c.op_time_us(g.cost_us(v), j));
    total += slowest + c.op_gap_us(g.cost_us(v));
  }
  constexpr int64_t kProbe = int64_t{1} << 30;
  double fixed = 0, per_byte = 0;
  for (int s = 0; s < d; ++s)
    for (int t = 0; t < d; ++t) {
      if (s == t) continue;
      const double at0 = c.transfer_time_us(0, s, t) + c.transfer_busy_us(0, s, t);
      const double at_probe = c.transfer_time_us(kProbe, s, t) + c.transfer_busy_us(kProbe, s, t);
      fixed = std::max(fixed, at0);
      per_byte = std::max(per_byte, (at_probe - at0) / static_cast<double>(kProbe));
    }
  for (EdgeId e = 0; e < g.num_edges(); ++e)
    total += fixed + per_byte * static_cast<double>(g.edge_bytes(e));
  return 2 * std::max(total, 1.0);
}

// log2(score) - 50 for a score of memory_rule_score above 2^50, from its exponent and
// mantissa separately, so that no precision goes to the leading 50.
double log2_above_ceiling(double score) {
  int exponent = 0;
  const double mantissa = std::frexp(score, &exponent);  // score = mantissa * 2^exponent
  return static_cast<double>(exponent - 51) + std::log2(2 * mantissa);
}

}  // namespace

EpisodeStart parse_episode_start(const std::string& text, const std::string& source) {
  EpisodeStart s;
  if (text.rfind(kPlacerStart, 0) == 0) {
    s.kind = StartKind::kPlacer;
    s.placer = text.substr(sizeof(kPlacerStart) - 1);
    const std::vector<std::string> names = fast_placer_names();
    if (s.placer != kBestPlacer && std::find(names.begin(), names.end(), s.placer) == names.end())
      throw_input_error(source, "env.start",
                        "'" + text + "': '" + s.placer + "' is not a fast placer (" +
                            placer_list(names) + ", or " + kBestPlacer + ": the fastest of them)");
  } else if (text == "fixed_random") {
    s.kind = StartKind::kFixedRandom;
  } else if (text == "all_zero") {
    s.kind = StartKind::kAllZero;
  } else if (text == "random") {
    s.kind = StartKind::kRandom;
  } else {
    throw_input_error(source, "env.start",
                      "'" + text + "' is not one of fixed_random, all_zero, random, placer:NAME");
  }
  return s;
}

std::string episode_start_name(const EpisodeStart& s) {
  switch (s.kind) {
    case StartKind::kFixedRandom:
      return "fixed_random";
    case StartKind::kAllZero:
      return "all_zero";
    case StartKind::kRandom:
      return "random";
    case StartKind::kPlacer:
      return kPlacerStart + s.placer;
  }
  return "?";
}

void validate_env_config(const EnvConfig& c, const std::string& source) {
  if (c.start.kind == StartKind::kPlacer)
    parse_episode_start(episode_start_name(c.start), source);  // the placer's name
  if (c.memory_penalty_s_per_gb < 0)
    throw_input_error(source, "env.memory_penalty_s_per_gb", "must be >= 0");
  if (!(c.max_mem_gb > 0)) throw_input_error(source, "env.max_mem_gb", "must be > 0");
  if (c.levels.empty() || c.levels.size() > 8)
    throw_input_error(source, "env.levels", "must list 1 to 8 levels (ops per group)");
  for (int ops : c.levels)
    if (ops < 1)
      throw_input_error(source, "env.levels",
                        "ops per group must be >= 1, got " + std::to_string(ops));
  if (c.passes < 1 || c.passes > 16)
    throw_input_error(source, "env.passes", "must be in 1..16, got " + std::to_string(c.passes));
}

PlacementEnv::PlacementEnv(const Graph& graph, const Cluster& cluster, EnvConfig config,
                           FineView fine)
    : graph_(graph),
      cluster_(cluster),
      config_(std::move(config)),
      sim_(graph, cluster),
      fine_(fine) {
  const int n = graph.num_nodes();
  const int d = cluster.num_devices();
  memory_rule_ = cluster.has_memory_limits();
  if (fine_.graph) {
    PLACETO_CHECK(fine_.group != nullptr);
    PLACETO_CHECK_EQ(fine_.group->size(), static_cast<size_t>(fine_.graph->num_nodes()));
    fine_sim_ = std::make_unique<Simulator>(*fine_.graph, cluster);
    fine_placement_ = Placement(d, fine_.graph->num_nodes(), 0);
    coarse_start_.assign(static_cast<size_t>(n), 0.0);
  }
  if (memory_rule_) fit_bound_us_ = fit_bound(simulated_graph(), cluster);
  main_sim().set_compute_memory(memory_rule_ || config_.memory_penalty_s_per_gb > 0);
  fixed_start_ = Placement(d, n, 0);
  if (config_.start.kind == StartKind::kFixedRandom) {
    std::mt19937_64 rng(config_.start_seed);
    for (auto& x : fixed_start_.device) x = static_cast<int32_t>(rng() % static_cast<uint64_t>(d));
  } else if (config_.start.kind == StartKind::kPlacer) {
    PlacerOptions opt;
    opt.seed = static_cast<int64_t>(config_.start_seed);
    const std::string& name = config_.start.placer;
    fixed_start_ = make_placer(name)->place(graph, cluster, opt);  // "best" is registered
    canonical_device_names(graph, cluster, &fixed_start_.device);
  }
  std::vector<std::vector<int32_t>> level_ids;  // per level, a group id per op
  if (config_.action == ActionUnit::kOpGroup) level_ids.push_back(training_op_groups(graph));
  if (config_.action == ActionUnit::kCoarse)
    for (int ops : config_.levels) {
      std::vector<int32_t> ids(static_cast<size_t>(n));
      if (ops <= 1) {
        std::iota(ids.begin(), ids.end(), 0);
      } else {
        ids = coarsen(graph, std::max(1, n / ops)).group;
      }
      level_ids.push_back(std::move(ids));
    }
  for (const auto& ids : level_ids) {
    std::vector<int32_t> index(static_cast<size_t>(n), -1);  // group id -> members_ index
    std::vector<int32_t> level;
    for (NodeId v : graph.topo_order()) {
      int32_t& g = index[static_cast<size_t>(ids[v])];
      if (g < 0) {
        g = static_cast<int32_t>(members_.size());
        members_.emplace_back();
        level.push_back(g);
      }
      members_[static_cast<size_t>(g)].push_back(v);
    }
    levels_.push_back(std::move(level));
  }
  build_order(nullptr);
  visited_.assign(n, 0);
}

void PlacementEnv::build_order(std::mt19937_64* rng) {
  order_.clear();
  step_group_.clear();
  if (levels_.empty()) {
    std::vector<NodeId> walk = graph_.topo_order();
    if (rng) std::iota(walk.begin(), walk.end(), 0);
    for (int p = 0; p < config_.passes; ++p) {
      if (rng) shuffle_in_place(walk, *rng);
      order_.insert(order_.end(), walk.begin(), walk.end());
    }
    return;
  }
  for (const auto& level : levels_) {
    std::vector<int32_t> walk = level;
    for (int p = 0; p < config_.passes; ++p) {
      if (rng) shuffle_in_place(walk, *rng);
      for (int32_t g : walk) {
        order_.push_back(members_[static_cast<size_t>(g)].front());
        step_group_.push_back(g);
      }
    }
  }
}

void PlacementEnv::place_step(Placement* p, int t, int32_t device) const {
  if (step_group_.empty()) {
    p->device[order_[t]] = device;
    return;
  }
  for (NodeId u : members_[static_cast<size_t>(step_group_[t])]) p->device[u] = device;
}

void PlacementEnv::set_fixed_start(Placement p) {
  PLACETO_CHECK_EQ(p.num_devices, cluster_.num_devices());
  PLACETO_CHECK_EQ(p.device.size(), static_cast<size_t>(graph_.num_nodes()));
  fixed_start_ = std::move(p);
}

CoarseEpisode coarse_episode(const Graph& g, const Cluster& cluster, const EnvConfig& env,
                             int groups) {
  CoarseEpisode out;
  out.env = env;
  groups = std::max(1, groups);
  if (env.start.kind != StartKind::kPlacer) {
    out.coarse = coarsen(g, groups);
    return out;
  }
  PlacerOptions po;
  po.seed = static_cast<int64_t>(env.start_seed);
  Placement fine = env.start.placer == kBestPlacer
                       ? best_fast_placement(g, cluster, po,
                                             g.num_nodes() > kTimedStartSkipOps
                                                 ? std::vector<std::string>{"m-etf"}
                                                 : std::vector<std::string>{})
                       : make_placer(env.start.placer)->place(g, cluster, po);
  canonical_device_names(g, cluster, &fine.device);
  out.coarse = coarsen(g, groups, &fine.device);
  Placement start(cluster.num_devices(), out.coarse.graph.num_nodes(), 0);
  for (NodeId v = 0; v < g.num_nodes(); ++v) start.device[out.coarse.group[v]] = fine.device[v];
  out.start = std::move(start);
  out.env.start.kind = StartKind::kAllZero;  // replaced by `start` (set_fixed_start)
  out.env.start.placer.clear();
  return out;
}

std::vector<NodeId> PlacementEnv::current_ops() const {
  PLACETO_CHECK(!done());
  if (step_group_.empty()) return {order_[step_]};
  return members_[static_cast<size_t>(step_group_[step_])];
}

void canonical_device_names(const Graph& g, const Cluster& cluster, std::vector<int32_t>* device) {
  if (cluster.heterogeneous()) return;
  std::vector<int32_t> rename(cluster.num_devices(), -1);
  int32_t next = 0;
  for (NodeId v : g.topo_order()) {
    int32_t& r = rename[(*device)[v]];
    if (r < 0) r = next++;
  }
  for (auto& x : *device) x = rename[x];
}

double PlacementEnv::total_relative_overflow(const SimResult& r) const {
  double sum = 0;
  for (int d = 0; d < cluster_.num_devices(); ++d) {
    const double cap = cluster_.devices[d].memory_bytes;
    if (!(cap > 0)) continue;
    const double need = static_cast<double>(r.peak_mem_bytes[d] + r.param_bytes[d]);
    sum += std::max(0.0, need - cap) / cap;
  }
  return sum;
}

double PlacementEnv::objective_of(const SimResult& r, double* score) const {
  if (memory_rule_) {
    const MemoryOverflow overflow = memory_overflow(r, cluster_);
    const double s = memory_rule_score(overflow, r.runtime_us);
    if (score) *score = s;
    if (overflow.fits()) return s;  // the runtime (below 2^50 us)
    return fit_bound_us_ * (1 + log2_above_ceiling(s));
  }
  double objective = r.runtime_us;
  if (config_.memory_penalty_s_per_gb > 0) {
    double peak_gb = static_cast<double>(r.max_peak_mem_bytes()) / 1e9;
    double over = std::max(0.0, peak_gb - config_.max_mem_gb);
    objective += 1e6 * config_.memory_penalty_s_per_gb * over;  // seconds -> microseconds
  }
  if (score) *score = objective;
  return objective;
}

const Placement& PlacementEnv::simulated(const Placement& p, Placement* scratch) const {
  if (!fine_.graph) return p;
  const std::vector<int32_t>& group = *fine_.group;
  scratch->num_devices = p.num_devices;
  scratch->device.resize(group.size());
  for (size_t v = 0; v < group.size(); ++v) scratch->device[v] = p.device[group[v]];
  return *scratch;
}

double PlacementEnv::evaluate() {
  const SimResult& r = main_sim().simulate(simulated(placement_, &fine_placement_));
  if (fine_.graph) {
    const std::vector<double>& start = fine_sim_->start_us();
    std::fill(coarse_start_.begin(), coarse_start_.end(), std::numeric_limits<double>::infinity());
    for (size_t v = 0; v < start.size(); ++v) {
      double& s = coarse_start_[static_cast<size_t>((*fine_.group)[v])];
      s = std::min(s, start[v]);
    }
  }
  runtime_ = r.runtime_us;
  objective_ = objective_of(r, &score_);
  return objective_;
}

void PlacementEnv::what_if_devices(std::vector<double>* out,
                                   std::vector<WhatIfMemory>* memory) const {
  PLACETO_CHECK(!done());
  const int d = cluster_.num_devices();
  if (!what_if_sim_) {
    what_if_sim_ = std::make_unique<Simulator>(simulated_graph(), cluster_);
    what_if_sim_->set_compute_memory(memory_rule_ || config_.memory_penalty_s_per_gb > 0);
  }
  out->assign(static_cast<size_t>(d), 0.0);
  if (memory) memory->assign(static_cast<size_t>(d), WhatIfMemory{});
  const double overflow_now =
      memory && memory_rule_ ? total_relative_overflow(main_sim().last_result()) : 0.0;
  const NodeId v = order_[step_];
  what_if_placement_ = placement_;
  for (int j = 0; j < d; ++j) {
    const SimResult* r = &main_sim().last_result();
    if (step_group_.empty() && placement_.device[v] == j) {
      (*out)[j] = objective_;  // the move changes nothing
    } else {
      place_step(&what_if_placement_, step_, j);
      r = &what_if_sim_->simulate(simulated(what_if_placement_, &fine_what_if_));
      (*out)[j] = objective_of(*r);
    }
    if (!memory || !memory_rule_) continue;
    WhatIfMemory& m = (*memory)[j];
    const double cap = cluster_.devices[j].memory_bytes;
    if (cap > 0) {
      const double need = static_cast<double>(r->peak_mem_bytes[j] + r->param_bytes[j]);
      m.headroom = std::clamp((cap - need) / cap, -1.0, 1.0);
    }
    m.overflow_change = std::clamp(total_relative_overflow(*r) - overflow_now, -1.0, 1.0);
  }
}

void PlacementEnv::reset(std::mt19937_64& rng) {
  const int d = cluster_.num_devices();
  if (config_.start.kind == StartKind::kRandom) {
    placement_ = Placement(d, graph_.num_nodes());
    for (auto& x : placement_.device) x = static_cast<int32_t>(rng() % static_cast<uint64_t>(d));
  } else {
    placement_ = fixed_start_;
  }
  if (config_.order == NodeOrder::kRandom) build_order(&rng);  // a new order every episode
  std::fill(visited_.begin(), visited_.end(), 0);
  step_ = 0;
  start_objective_ = evaluate();
  start_runtime_ = runtime_;
  start_placement_ = placement_;
  chosen_.clear();
  best_step_ = 0;
  best_objective_ = objective_;
  best_runtime_ = runtime_;
  best_score_ = score_;
  best_memory_ok_ = main_sim().last_result().memory_ok;
}

void PlacementEnv::note_if_best() {
  const bool ok = main_sim().last_result().memory_ok;
  // With capacities the rule's exact score decides (it puts placements that fit first).
  const bool better = memory_rule_ ? score_ < best_score_
                                   : (ok && !best_memory_ok_) ||
                                         (ok == best_memory_ok_ && objective_ < best_objective_);
  if (better) {
    best_objective_ = objective_;
    best_score_ = score_;
    best_runtime_ = runtime_;
    best_memory_ok_ = ok;
    best_step_ = step_;
  }
}

Placement PlacementEnv::best_placement() const {
  // Rebuilt from the start and the steps (cheaper than copying every improvement).
  Placement p = start_placement_;
  for (int t = 0; t < best_step_; ++t) place_step(&p, t, chosen_[t]);
  return p;
}

double PlacementEnv::step(int device) {
  PLACETO_CHECK(!done());
  PLACETO_CHECK(device >= 0 && device < cluster_.num_devices());
  const double before = config_.reward == RewardKind::kIncumbent ? best_objective_ : objective_;
  const NodeId v = order_[step_];
  place_step(&placement_, step_, device);
  if (step_group_.empty()) {
    visited_[v] += 1;
  } else {
    for (NodeId u : members_[static_cast<size_t>(step_group_[step_])]) visited_[u] += 1;
  }
  chosen_.push_back(device);
  ++step_;
  const double after = evaluate();
  note_if_best();
  double reward = before - after;
  if (config_.reward == RewardKind::kIncumbent) reward = std::max(0.0, reward);
  return config_.normalize_reward ? reward / start_objective_ : reward;
}

}  // namespace placeto
