#include "actors/policy_placer.h"

#include <algorithm>
#include <chrono>
#include <random>
#include <vector>

#include "actors/rollout.h"
#include "common/error.h"
#include "sim/coarsen.h"
#include "sim/placers/memory_rule.h"
#include "sim/placers/registry.h"
#include "sim/simulator.h"

namespace placeto {

namespace {

PolicyPlacement place_flat(PolicyNet& net, const EnvConfig& env_cfg, bool sweep, const Graph& g,
                           const Cluster& cluster, int samples, uint64_t seed, FineView fine = {},
                           const Placement* start = nullptr) {
  auto t0 = std::chrono::steady_clock::now();
  GraphTensors gt = make_graph_tensors(g, sweep);
  PlacementEnv env(g, cluster, env_cfg, fine);
  if (start) env.set_fixed_start(*start);
  std::mt19937_64 rng(seed);
  PolicyPlacement best;
  bool best_ok = false;
  double best_score = 0;
  bool have = false;
  auto consider = [&](const EpisodeRecord& rec) {
    // Each episode's best placement seen, its start included: a policy never returns a
    // placement worse than the one it started from.  With capacities the memory rule's score
    // decides (sim/placers/memory_rule.h), else feasibility, then the runtime.
    const bool ok = rec.best_memory_ok;
    const bool better =
        env.memory_rule()
            ? rec.best_score < best_score
            : (ok && !best_ok) || (ok == best_ok && rec.best_runtime_us < best.runtime_us);
    if (!have || better) {
      best.placement = rec.best_placement;
      best.runtime_us = rec.best_runtime_us;
      best_ok = ok;
      best_score = rec.best_score;
      have = true;
    }
  };
  consider(run_episode(net, gt, env, rng, ActionMode::kGreedy, false));
  // Sampled episodes run in lockstep batches (one forward per step for the whole batch).
  constexpr int kBatch = 8;
  std::vector<std::unique_ptr<PlacementEnv>> envs;
  for (int done = 1; done < samples;) {
    const int b = std::min(kBatch, samples - done);
    while (static_cast<int>(envs.size()) < b) {
      envs.push_back(std::make_unique<PlacementEnv>(g, cluster, env_cfg, fine));
      if (start) envs.back()->set_fixed_start(*start);
    }
    std::vector<PlacementEnv*> batch;
    for (int i = 0; i < b; ++i) batch.push_back(envs[i].get());
    for (const EpisodeRecord& rec : run_episodes(net, gt, batch, rng, ActionMode::kSample, false))
      consider(rec);
    done += b;
  }
  best.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return best;
}

// The memory rule's score of a simulation (sim/placers/memory_rule.h).
double rule_score(const SimResult& r, const Cluster& cluster) {
  return memory_rule_score(memory_overflow(r, cluster), r.runtime_us);
}

}  // namespace

int refine_group_boundaries(const Graph& g, const Cluster& cluster,
                            const std::vector<int32_t>& group, int max_sims, Placement* p) {
  if (max_sims <= 0) return 0;
  // At most kBoundaryOpSims ops simulated in all, so the pass stays linear in the graph.
  max_sims = static_cast<int>(std::min<int64_t>(
      max_sims, std::max<int64_t>(1, kBoundaryOpSims / std::max(1, g.num_nodes()))));
  Simulator sim(g, cluster);
  sim.set_compute_memory(cluster.has_memory_limits());
  double score = rule_score(sim.simulate(*p), cluster);
  const std::vector<int32_t> unit_of = training_op_groups(g);
  std::vector<std::vector<NodeId>> units;
  std::vector<int32_t> index(static_cast<size_t>(g.num_nodes()), -1);
  for (NodeId v : g.topo_order()) {
    int32_t& u = index[static_cast<size_t>(unit_of[v])];
    if (u < 0) {
      u = static_cast<int32_t>(units.size());
      units.emplace_back();
    }
    units[static_cast<size_t>(u)].push_back(v);
  }
  // The units at a group boundary, heaviest first (ties: topological order).
  std::vector<double> unit_cost(units.size(), 0.0);
  std::vector<size_t> boundary;
  for (size_t u = 0; u < units.size(); ++u) {
    bool cut = false;
    for (NodeId v : units[u]) {
      unit_cost[u] += g.cost_us(v);
      for (int i = g.parent_begin(v); i < g.parent_end(v); ++i)
        cut = cut || group[g.edge_src(g.parent_edges()[i])] != group[v];
      for (int i = g.child_begin(v); i < g.child_end(v); ++i)
        cut = cut || group[g.edge_dst(g.child_edges()[i])] != group[v];
    }
    if (cut) boundary.push_back(u);
  }
  std::stable_sort(boundary.begin(), boundary.end(),
                   [&](size_t a, size_t b) { return unit_cost[a] > unit_cost[b]; });
  std::vector<double> load(static_cast<size_t>(cluster.num_devices()), 0.0);
  for (NodeId v = 0; v < g.num_nodes(); ++v) load[p->device[v]] += g.cost_us(v);
  int sims = 0, kept = 0;
  std::vector<int32_t> candidates, before;
  for (size_t u : boundary) {
    if (sims >= max_sims) break;
    const std::vector<NodeId>& members = units[u];
    // The devices on the other end of this unit's tensors that cross a group boundary, then
    // the device with the least compute.
    candidates.clear();
    const int32_t here = p->device[members.front()];
    auto add = [&](int32_t d) {
      if (d != here && std::find(candidates.begin(), candidates.end(), d) == candidates.end())
        candidates.push_back(d);
    };
    for (NodeId v : members) {
      for (int i = g.parent_begin(v); i < g.parent_end(v); ++i) {
        const NodeId w = g.edge_src(g.parent_edges()[i]);
        if (group[w] != group[v]) add(p->device[w]);
      }
      for (int i = g.child_begin(v); i < g.child_end(v); ++i) {
        const NodeId w = g.edge_dst(g.child_edges()[i]);
        if (group[w] != group[v]) add(p->device[w]);
      }
    }
    add(static_cast<int32_t>(std::min_element(load.begin(), load.end()) - load.begin()));
    // The members' devices now (a unit's ops may sit in different groups).
    before.clear();
    for (NodeId v : members) before.push_back(p->device[v]);
    int32_t best_device = -1;
    for (int32_t d : candidates) {
      if (sims >= max_sims) break;
      for (NodeId v : members) p->device[v] = d;
      const double s = rule_score(sim.simulate(*p), cluster);
      ++sims;
      if (score_improves(s, score)) {
        score = s;
        best_device = d;
      }
    }
    for (size_t i = 0; i < members.size(); ++i) {
      p->device[members[i]] = best_device >= 0 ? best_device : before[i];
      load[before[i]] -= g.cost_us(members[i]);
      load[p->device[members[i]]] += g.cost_us(members[i]);
    }
    kept += best_device >= 0;
  }
  return kept;
}

namespace {
// The end of a hierarchical placement: every op on its group's device, the boundary pass,
// the whole graph's simulation.
PolicyPlacement finish_hierarchy(const Graph& g, const Cluster& cluster, const CoarseGraph& coarse,
                                 const HierarchyOptions& hierarchy,
                                 std::chrono::steady_clock::time_point t0,
                                 const PolicyPlacement& on_groups);
}  // namespace

PolicyPlacement place_with_network(PolicyNet& net, const EnvConfig& env_cfg, bool sweep,
                                   const Graph& g, const Cluster& cluster, int samples,
                                   uint64_t seed, const HierarchyOptions& hierarchy) {
  if (hierarchy.above <= 0 || g.num_nodes() <= hierarchy.above)
    return place_flat(net, env_cfg, sweep, g, cluster, samples, seed);
  const auto t0 = std::chrono::steady_clock::now();
  const CoarseEpisode ce = coarse_episode(g, cluster, env_cfg, hierarchy.groups);
  return finish_hierarchy(
      g, cluster, ce.coarse, hierarchy, t0,
      place_flat(net, ce.env, sweep, ce.coarse.graph, cluster, samples, seed,
                 hierarchy.fine_rewards ? FineView{&g, &ce.coarse.group} : FineView{},
                 ce.start ? &*ce.start : nullptr));
}

namespace {

PolicyPlacement finish_hierarchy(const Graph& g, const Cluster& cluster, const CoarseGraph& coarse,
                                 const HierarchyOptions& hierarchy,
                                 std::chrono::steady_clock::time_point t0,
                                 const PolicyPlacement& on_groups) {
  PolicyPlacement out;
  out.placement = ungroup(coarse, on_groups.placement);
  refine_group_boundaries(g, cluster, coarse.group, hierarchy.boundary_sims, &out.placement);
  Simulator sim(g, cluster);
  out.runtime_us = sim.simulate(out.placement).runtime_us;
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

}  // namespace

namespace {

class PolicyPlacer : public Placer {
 public:
  explicit PolicyPlacer(LearnedPlacerSetup s) : s_(std::move(s)) {}
  std::string name() const override { return "policy"; }
  Placement place(const Graph& g, const Cluster& c, const PlacerOptions& o) const override {
    return place_policy(g, c, o).placement;
  }

 protected:
  PolicyPlacement place_policy(const Graph& g, const Cluster& c, const PlacerOptions& o) const {
    if (!s_.net->places(c.num_devices()))
      throw InputError(s_.source + ": the policy was trained for " + std::to_string(s_.devices) +
                       " devices, but the cluster has " + std::to_string(c.num_devices()) +
                       " (train a policy for that count, or pass --devices " +
                       std::to_string(s_.devices) + ")");
    PolicyNet net = s_.net;  // shares the module
    return place_with_network(net, s_.env, s_.sweep, g, c, std::max(1, o.samples),
                              static_cast<uint64_t>(o.seed), s_.hierarchy);
  }

  LearnedPlacerSetup s_;
};

class PolicyAnnealPlacer : public PolicyPlacer {
 public:
  using PolicyPlacer::PolicyPlacer;
  std::string name() const override { return "policy+anneal"; }
  Placement place(const Graph& g, const Cluster& c, const PlacerOptions& o) const override {
    const auto t0 = std::chrono::steady_clock::now();
    PlacerOptions ao;
    ao.seed = o.seed;
    ao.budget = o.budget;
    ao.stats = o.stats;
    ao.initial = place_policy(g, c, o).placement;
    if (o.time_ms > 0) {
      const double spent =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      ao.time_ms = std::max(1e-3, o.time_ms - spent);
      ao.budget = 0;
    }
    return make_placer("anneal")->place(g, c, ao);
  }
};

}  // namespace

std::unique_ptr<Placer> make_policy_placer(LearnedPlacerSetup setup) {
  return std::make_unique<PolicyPlacer>(std::move(setup));
}

std::unique_ptr<Placer> make_policy_anneal_placer(LearnedPlacerSetup setup) {
  return std::make_unique<PolicyAnnealPlacer>(std::move(setup));
}

}  // namespace placeto
