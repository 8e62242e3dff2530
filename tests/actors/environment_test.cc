// The environment's rewards and its record of the best placement seen (no torch).
#include "actors/environment.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <random>

#include "common/error.h"
#include "sim/coarsen.h"
#include "sim/placers/memory.h"
#include "sim/placers/memory_rule.h"
#include "sim/placers/registry.h"
#include "sim/random_graph.h"
#include "sim/simulator.h"

namespace placeto {
namespace {

struct Walk {
  std::vector<double> rewards, runtimes;  // runtimes[0]: the start
  double best_us = 0;
  Placement best;
};

// One episode of uniformly random moves (the same moves for every reward).
Walk random_walk(const Graph& g, const Cluster& c, const std::string& reward, uint64_t seed) {
  EnvConfig cfg;
  cfg.start = parse_episode_start("placer:metis", "test");  // a good start: random moves hurt
  cfg.reward = *parse_enum(reward, kRewardNames);
  PlacementEnv env(g, c, cfg);
  std::mt19937_64 rng(seed), moves(seed + 100);
  env.reset(rng);
  Walk w;
  w.runtimes.push_back(env.current_runtime_us());
  while (!env.done()) {
    w.rewards.push_back(env.step(static_cast<int>(moves() % c.num_devices())));
    w.runtimes.push_back(env.current_runtime_us());
  }
  w.best_us = env.best_runtime_us();
  w.best = env.best_placement();
  return w;
}

TEST(Environment, StepRewardsTelescopeToTheFinalImprovement) {
  Graph g = make_random_graph(40, 3);
  Cluster c = default_cluster(3);
  Walk w = random_walk(g, c, "step", 5);
  double sum = 0;
  for (double r : w.rewards) sum += r;
  EXPECT_NEAR(sum, (w.runtimes.front() - w.runtimes.back()) / w.runtimes.front(), 1e-12);
  EXPECT_LT(*std::min_element(w.rewards.begin(), w.rewards.end()), 0)
      << "the walk never made things worse: the test would not tell the rewards apart";
}

// r_t = max(0, best_{t-1} - R_t) / R_0: never negative, and the episode's return is the
// improvement of the best placement seen over the start.
TEST(Environment, IncumbentRewardPaysOnlyNewBests) {
  Graph g = make_random_graph(40, 3);
  Cluster c = default_cluster(3);
  for (uint64_t seed : {5, 6, 7}) {
    Walk w = random_walk(g, c, "incumbent", seed);
    double best = w.runtimes[0], sum = 0;
    for (size_t t = 0; t < w.rewards.size(); ++t) {
      const double expected = std::max(0.0, best - w.runtimes[t + 1]) / w.runtimes[0];
      EXPECT_NEAR(w.rewards[t], expected, 1e-12) << "step " << t;
      EXPECT_GE(w.rewards[t], 0);
      best = std::min(best, w.runtimes[t + 1]);
      sum += w.rewards[t];
    }
    EXPECT_NEAR(sum, (w.runtimes[0] - best) / w.runtimes[0], 1e-12);
  }
}

// The best placement seen: no worse than the start or any later placement, and it is the
// placement that was simulated at that runtime.
TEST(Environment, BestPlacementSeenIncludesTheStart) {
  Graph g = make_random_graph(40, 8);
  Cluster c = default_cluster(3);
  Simulator sim(g, c);
  bool ended_worse = false;
  for (uint64_t seed : {1, 2, 3, 4}) {
    Walk w = random_walk(g, c, "step", seed);
    EXPECT_EQ(w.best_us, *std::min_element(w.runtimes.begin(), w.runtimes.end()));
    EXPECT_LE(w.best_us, w.runtimes.front());
    EXPECT_DOUBLE_EQ(sim.simulate(w.best).runtime_us, w.best_us);
    ended_worse = ended_worse || w.runtimes.back() > w.runtimes.front();
  }
  EXPECT_TRUE(ended_worse) << "no walk ended worse than its start: the test shows nothing";
}

// env.action: op_group moves a forward op with its training ops as one action: one step per
// group, every member lands on the chosen device, and the best placement is rebuilt the same
// way.
TEST(Environment, GroupActionsMoveAnOpWithItsTrainingOps) {
  GraphBuilder b;
  for (const char* op : {"a", "b", "c"}) b.add_node(op, "", 50, {1000});
  for (const char* op : {"a", "b"}) {
    b.add_node(std::string(op) + "/grad", "", 50, {1000});
    b.add_node(std::string(op) + "/update", "", 10, {8});
  }
  b.add_edge("a", "b");
  b.add_edge("b", "c");
  b.add_edge("c", "b/grad");
  b.add_edge("b/grad", "a/grad");
  b.add_edge("b/grad", "b/update");
  b.add_edge("a/grad", "a/update");
  const Graph g = b.build();
  const Cluster c = default_cluster(2);
  EnvConfig cfg;
  cfg.start.kind = StartKind::kAllZero;
  cfg.action = ActionUnit::kOpGroup;
  PlacementEnv env(g, c, cfg);
  std::mt19937_64 rng(1);
  env.reset(rng);
  ASSERT_EQ(env.order().size(), 3u);  // groups {a, a/grad, a/update}, {b, ...}, {c}
  EXPECT_EQ(g.node_name(env.current_node()), "a");
  env.step(1);
  const Placement& p = env.placement();
  for (const char* op : {"a", "a/grad", "a/update"}) EXPECT_EQ(p.device[g.find(op)], 1) << op;
  for (const char* op : {"b", "b/grad", "b/update", "c"}) EXPECT_EQ(p.device[g.find(op)], 0);
  EXPECT_EQ(env.visited()[g.find("a/update")], 1);
  env.step(1);
  env.step(0);
  EXPECT_TRUE(env.done());
  const Placement best = env.best_placement();
  Simulator sim(g, c);
  EXPECT_DOUBLE_EQ(sim.simulate(best).runtime_us, env.best_runtime_us());
  for (NodeId v = 0; v < g.num_nodes(); ++v) {
    const std::string name = g.node_name(v);
    const std::string owner = name.substr(0, name.find('/'));
    EXPECT_EQ(best.device[v], best.device[g.find(owner)]) << name;
  }
}

// env.passes: the order is walked that many times (the random order anew each pass), and the
// best placement is rebuilt across passes.
TEST(Environment, PassesWalkTheOrderAgain) {
  Graph g = make_random_graph(30, 4);
  Cluster c = default_cluster(3);
  for (NodeOrder order : {NodeOrder::kTopo, NodeOrder::kRandom}) {
    EnvConfig cfg;
    cfg.order = order;
    cfg.passes = 3;
    PlacementEnv env(g, c, cfg);
    std::mt19937_64 rng(4), moves(9);
    env.reset(rng);
    ASSERT_EQ(env.order().size(), 90u);
    while (!env.done()) env.step(static_cast<int>(moves() % 3));
    for (NodeId v = 0; v < g.num_nodes(); ++v) EXPECT_EQ(env.visited()[v], 3);
    const std::vector<NodeId> first(env.order().begin(), env.order().begin() + 30);
    const std::vector<NodeId> second(env.order().begin() + 30, env.order().begin() + 60);
    if (order == NodeOrder::kTopo) {
      EXPECT_EQ(first, second);
    } else {
      EXPECT_NE(first, second);
    }
    Simulator sim(g, c);
    EXPECT_DOUBLE_EQ(sim.simulate(env.best_placement()).runtime_us, env.best_runtime_us());
  }
  EnvConfig bad;
  bad.passes = 0;
  try {
    validate_env_config(bad, "run.yaml");
    FAIL() << "accepted passes 0";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("env.passes"), std::string::npos) << e.what();
  }
}

// what_if_devices: the objective of each device choice for the current step, as a direct
// simulation of the moved placement gives it, without disturbing the environment's own
// simulation (start times, last result).
TEST(Environment, WhatIfIsTheSimulatedObjectiveOfEachChoice) {
  Graph g = make_random_graph(30, 6);
  Cluster c = default_cluster(3);
  for (ActionUnit action : {ActionUnit::kOp, ActionUnit::kOpGroup, ActionUnit::kCoarse}) {
    EnvConfig cfg;
    cfg.action = action;
    PlacementEnv env(g, c, cfg);
    std::mt19937_64 rng(2), moves(3);
    env.reset(rng);
    Simulator sim(g, c);
    bool differ = false;
    while (!env.done()) {
      const std::vector<double> starts = env.start_us();
      const double now = env.objective_us();
      std::vector<double> what_if;
      env.what_if_devices(&what_if);
      ASSERT_EQ(what_if.size(), 3u);
      EXPECT_EQ(env.start_us(), starts);
      EXPECT_EQ(env.objective_us(), now);
      for (int d = 0; d < 3; ++d) {
        PlacementEnv copy(g, c, cfg);  // the same step taken by a second environment
        std::mt19937_64 rng2(2);
        copy.reset(rng2);
        Placement p = env.placement();
        for (int t = 0; t < env.step_index(); ++t) copy.step(p.device[copy.current_node()]);
        copy.step(d);
        EXPECT_DOUBLE_EQ(what_if[d], copy.objective_us()) << "step " << env.step_index();
        differ = differ || what_if[d] != now;
      }
      env.step(static_cast<int>(moves() % 3));
      if (env.step_index() > 6) break;
    }
    EXPECT_TRUE(differ) << "no choice changed the runtime: the test shows nothing";
  }
}

// One placement seen by an environment: its objective, and what the rule says of it.
struct Seen {
  double objective, runtime;
  MemoryOverflow overflow;
};

// Random placements on a capped cluster (random starts, then random moves), each with the
// environment's objective and the overflow and runtime of a separate simulation.
std::vector<Seen> seen_on_capped_cluster(const Graph& g, const Cluster& c, double* bound) {
  EnvConfig cfg;
  cfg.start = parse_episode_start("random", "test");
  PlacementEnv env(g, c, cfg);
  EXPECT_TRUE(env.memory_rule());
  *bound = env.fit_bound_us();
  Simulator sim(g, c);
  std::vector<Seen> seen;
  std::mt19937_64 rng(11), moves(12);
  for (int episode = 0; episode < 6; ++episode) {
    env.reset(rng);
    for (int t = 0; t < 40 && !env.done(); ++t) {
      const SimResult& r = sim.simulate(env.placement());
      seen.push_back({env.objective_us(), r.runtime_us, memory_overflow(r, c)});
      EXPECT_EQ(env.current_runtime_us(), r.runtime_us);
      env.step(static_cast<int>(moves() % c.num_devices()));
    }
  }
  return seen;
}

// On a cluster with capacities the objective orders placements as the memory rule: fits
// first, then the smaller overflow, then the shorter step.  A placement that fits scores its
// runtime, below U; one that does not scores above U.  Ties are allowed only where the
// header says they may happen: two placements that do not fit whose rule scores agree to
// 1e-12 (the same overflow grid cells, close steps).
TEST(Environment, ObjectiveOnCappedClusterOrdersAsTheMemoryRule) {
  for (double factor : {1.5, 2.0}) {
    Graph g = make_random_graph(40, 7);
    const Cluster c = with_balanced_capacity(default_cluster(3), g, factor);
    double bound = 0;
    const std::vector<Seen> seen = seen_on_capped_cluster(g, c, &bound);
    ASSERT_GT(bound, 0);
    int fit = 0, pairs = 0, ties = 0;
    for (const Seen& a : seen) {
      if (a.overflow.fits()) {
        ++fit;
        EXPECT_EQ(a.objective, a.runtime);
        EXPECT_LT(a.objective, bound);
      } else {
        EXPECT_GT(a.objective, bound);
      }
      for (const Seen& b : seen) {
        if (!better_under_memory_rule(a.overflow, a.runtime, b.overflow, b.runtime)) continue;
        ++pairs;
        if (a.objective < b.objective) continue;
        const double sa = memory_rule_score(a.overflow, a.runtime);
        const double sb = memory_rule_score(b.overflow, b.runtime);
        const bool may_tie = !a.overflow.fits() && !b.overflow.fits() && sb - sa < 1e-12 * sb;
        EXPECT_TRUE(may_tie && a.objective == b.objective)
            << "factor " << factor << ": the rule prefers a (objective " << a.objective
            << ", max overflow " << a.overflow.max_relative << ", step " << a.runtime
            << ") to b (objective " << b.objective << ", max overflow " << b.overflow.max_relative
            << ", step " << b.runtime << ")";
        ++ties;
      }
    }
    EXPECT_GT(fit, 0) << "factor " << factor << ": no placement fits, the test shows little";
    EXPECT_LT(fit, static_cast<int>(seen.size())) << "factor " << factor << ": every one fits";
    EXPECT_GT(pairs, 10000);
    EXPECT_LT(ties, pairs / 1000 + 1);
    std::printf("factor %.1f: %d of %zu placements fit, %d ordered pairs, %d ties\n", factor, fit,
                seen.size(), pairs, ties);
  }
}

// The best placement of an episode follows the rule exactly: its score is the lowest of the
// placements seen, and the placement rebuilt is the one that scored it.
TEST(Environment, BestPlacementOnCappedClusterFollowsTheRule) {
  Graph g = make_random_graph(40, 7);
  const Cluster c = with_balanced_capacity(default_cluster(3), g, 1.5);
  EnvConfig cfg;
  cfg.start = parse_episode_start("random", "test");
  PlacementEnv env(g, c, cfg);
  Simulator sim(g, c);
  auto score = [&](const Placement& p) {
    const SimResult& r = sim.simulate(p);
    return memory_rule_score(memory_overflow(r, c), r.runtime_us);
  };
  std::mt19937_64 rng(3), moves(4);
  for (int episode = 0; episode < 3; ++episode) {
    env.reset(rng);
    double lowest = score(env.placement());
    while (!env.done()) {
      env.step(static_cast<int>(moves() % 3));
      lowest = std::min(lowest, score(env.placement()));
    }
    EXPECT_EQ(env.best_score(), lowest);
    EXPECT_EQ(score(env.best_placement()), lowest);
    EXPECT_EQ(env.best_memory_ok(), lowest < 1125899906842624.0);  // 2^50: it fits
  }
}

// what_if_devices' memory columns: the device's headroom after the move and the change of the
// total relative overflow, as a simulation of the moved placement gives them; 1 and 0 on a
// cluster without capacities.
TEST(Environment, WhatIfMemoryIsTheMovesHeadroomAndOverflowChange) {
  Graph g = make_random_graph(30, 6);
  auto relative_overflow = [](const SimResult& r, const Cluster& c) {
    double sum = 0;
    for (int d = 0; d < c.num_devices(); ++d) {
      const double cap = c.devices[d].memory_bytes;
      const double need = static_cast<double>(r.peak_mem_bytes[d] + r.param_bytes[d]);
      sum += std::max(0.0, need - cap) / cap;
    }
    return sum;
  };
  const Cluster capped = with_balanced_capacity(default_cluster(3), g, 1.2);
  const Cluster open = default_cluster(3);
  for (const Cluster* c : {&capped, &open}) {
    EnvConfig cfg;
    PlacementEnv env(g, *c, cfg);
    std::mt19937_64 rng(2), moves(3);
    env.reset(rng);
    Simulator sim(g, *c);
    sim.set_compute_memory(true);
    bool negative = false;
    for (int t = 0; t < 8; ++t) {
      std::vector<double> what_if;
      std::vector<WhatIfMemory> memory;
      env.what_if_devices(&what_if, &memory);
      ASSERT_EQ(memory.size(), 3u);
      const double now = c == &capped ? relative_overflow(sim.simulate(env.placement()), *c) : 0;
      for (int d = 0; d < 3; ++d) {
        if (c == &open) {
          EXPECT_EQ(memory[d].headroom, 1.0);
          EXPECT_EQ(memory[d].overflow_change, 0.0);
          continue;
        }
        Placement p = env.placement();
        p.device[env.current_node()] = d;
        const SimResult& r = sim.simulate(p);
        const double cap = c->devices[d].memory_bytes;
        const double need = static_cast<double>(r.peak_mem_bytes[d] + r.param_bytes[d]);
        EXPECT_DOUBLE_EQ(memory[d].headroom, std::clamp((cap - need) / cap, -1.0, 1.0));
        EXPECT_NEAR(memory[d].overflow_change,
                    std::clamp(relative_overflow(r, *c) - now, -1.0, 1.0), 1e-12);
        negative = negative || memory[d].headroom < 0;
      }
      env.step(static_cast<int>(moves() % 3));
    }
    if (c == &capped) {
      EXPECT_TRUE(negative) << "no device over capacity: the test shows little";
    }
  }
}

// env.action coarse: each level of env.levels walks groups of sim/coarsen's coarsen() (a
// level of 1: single ops), coarse to fine; every op is placed once per level and pass, a step
// moves its whole group, and the best placement is rebuilt across the levels.
// Episodes on a coarse graph with rewards from the fine graph (FineView): every objective is
// the fine graph's simulation of the ungrouped placement, on a capped cluster too, and each
// group starts when its first op starts.
TEST(Environment, FineViewSimulatesTheGraphTheGroupsCameFrom) {
  const Graph g = make_random_graph(120, 11);
  const CoarseGraph coarse = coarsen(g, 16);
  for (double factor : {0.0, 1.2}) {
    SCOPED_TRACE(factor);
    Cluster c = default_cluster(3);
    if (factor > 0) c = with_balanced_capacity(c, g, factor);
    PlacementEnv env(coarse.graph, c, EnvConfig{}, FineView{&g, &coarse.group});
    EXPECT_EQ(&env.simulated_graph(), &g);
    std::mt19937_64 rng(3), moves(5);
    env.reset(rng);
    Simulator fine(g, c);
    fine.set_compute_memory(true);
    while (!env.done()) {
      std::vector<double> what_if;
      env.what_if_devices(&what_if);
      const int d = static_cast<int>(moves() % 3);
      env.step(d);
      const SimResult& r = fine.simulate(ungroup(coarse, env.placement()));
      EXPECT_DOUBLE_EQ(env.current_runtime_us(), r.runtime_us);
      EXPECT_DOUBLE_EQ(env.objective_us(), what_if[static_cast<size_t>(d)]);
      if (factor > 0) {
        EXPECT_EQ(env.last_sim().peak_mem_bytes, r.peak_mem_bytes);
      }
      std::vector<double> first(static_cast<size_t>(coarse.graph.num_nodes()), 1e300);
      for (NodeId v = 0; v < g.num_nodes(); ++v)
        first[coarse.group[v]] = std::min(first[coarse.group[v]], fine.start_us()[v]);
      EXPECT_EQ(env.start_us(), first);
    }
    EXPECT_DOUBLE_EQ(fine.simulate(ungroup(coarse, env.best_placement())).runtime_us,
                     env.best_runtime_us());
  }
}

// A hierarchical episode with a placer start (coarse_episode): the placer's placement of the
// whole graph is exactly the episode's start, every group on one of its devices; without a
// placer start there is no start to keep and the coarsening is the plain one.
TEST(Environment, CoarseEpisodeStartsFromThePlacersPlacementOfTheWholeGraph) {
  const Graph g = make_random_graph(150, 13);
  const Cluster c = default_cluster(3);
  EnvConfig cfg;
  cfg.start = parse_episode_start("placer:metis", "test");
  const CoarseEpisode ce = coarse_episode(g, c, cfg, 12);
  ASSERT_TRUE(ce.start.has_value());
  PlacerOptions po;
  po.seed = static_cast<int64_t>(cfg.start_seed);
  Placement metis = make_placer("metis")->place(g, c, po);
  canonical_device_names(g, c, &metis.device);
  EXPECT_EQ(ungroup(ce.coarse, *ce.start).device, metis.device);
  PlacementEnv env(ce.coarse.graph, c, ce.env, FineView{&g, &ce.coarse.group});
  env.set_fixed_start(*ce.start);
  std::mt19937_64 rng(1);
  env.reset(rng);
  Simulator sim(g, c);
  EXPECT_DOUBLE_EQ(env.start_runtime_us(), sim.simulate(metis).runtime_us);
  const CoarseEpisode plain = coarse_episode(g, c, EnvConfig{}, 12);
  EXPECT_FALSE(plain.start.has_value());
  EXPECT_EQ(plain.coarse.group, coarsen(g, 12).group);
}

TEST(Environment, CoarseLevelsMoveGroupsThenOps) {
  Graph g = make_random_graph(48, 5);
  Cluster c = default_cluster(3);
  EnvConfig cfg;
  cfg.action = ActionUnit::kCoarse;
  cfg.levels = {8, 1};
  cfg.passes = 2;
  PlacementEnv env(g, c, cfg);
  std::mt19937_64 rng(1), moves(7);
  env.reset(rng);
  const size_t coarse_steps = env.order().size() - 2 * 48;
  EXPECT_GE(coarse_steps, 2u * 2);  // at least 2 groups, twice
  EXPECT_LE(coarse_steps, 2u * 6);  // coarsen() makes at most 48 / 8 groups
  EXPECT_EQ(coarse_steps % 2, 0u);
  // The first coarse step moves several ops at once.
  const Placement before = env.placement();
  env.step((before.device[env.current_node()] + 1) % 3);
  int moved = 0;
  for (NodeId v = 0; v < 48; ++v) moved += env.placement().device[v] != before.device[v];
  EXPECT_GT(moved, 1);
  while (!env.done()) env.step(static_cast<int>(moves() % 3));
  for (NodeId v = 0; v < 48; ++v) EXPECT_EQ(env.visited()[v], 4) << v;  // 2 levels x 2 passes
  Simulator sim(g, c);
  EXPECT_DOUBLE_EQ(sim.simulate(env.best_placement()).runtime_us, env.best_runtime_us());
  EnvConfig bad = cfg;
  bad.levels = {8, 0};
  try {
    validate_env_config(bad, "run.yaml");
    FAIL() << "accepted a level of 0 ops";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("env.levels"), std::string::npos) << e.what();
  }
}

TEST(Environment, StartsAreParsedOnceWithTheAllowedNames) {
  EXPECT_EQ(parse_episode_start("placer:best", "run.yaml").placer, "best");
  EXPECT_EQ(parse_episode_start("all_zero", "run.yaml").kind, StartKind::kAllZero);
  for (const char* text : {"placer:best", "placer:m-etf", "random", "fixed_random"})
    EXPECT_EQ(episode_start_name(parse_episode_start(text, "run.yaml")), text);
  try {
    parse_episode_start("all_zeros", "run.yaml");
    FAIL() << "accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("env.start"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("all_zeros"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(parse_enum(std::string("incumbant"), kRewardNames).has_value());
  EXPECT_EQ(enum_choices(kRewardNames), "step, incumbent");
}

}  // namespace
}  // namespace placeto
