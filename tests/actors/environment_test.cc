// The environment's rewards and its record of the best placement seen (no torch).
#include "actors/environment.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "common/error.h"
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
