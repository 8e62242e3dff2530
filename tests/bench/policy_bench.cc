// Policy and training speed on one thread: the per-step forward of a rollout, and whole
// training episodes (rollout + batched loss + backward) with the simulator/network split.
// Run: build/bin/policy_bench  (see docs/PERFORMANCE.md)
#include <benchmark/benchmark.h>
#include <torch/torch.h>

#include <memory>

#include "actors/rollout.h"
#include "learner/loss.h"
#include "sim/coarsen.h"
#include "sim/random_graph.h"

namespace placeto {
namespace {

Graph bench_graph(int n) {
  RandomGraphOptions o;
  o.num_nodes = n;
  o.seed = 11;
  return make_random_graph(o);
}

// One thread, a fresh 4-device policy and an n-op graph with its tensors.
struct BenchSetup {
  explicit BenchSetup(int n, bool lookahead = false) {
    torch::set_num_threads(1);
    torch::manual_seed(0);
    pc.num_devices = 4;
    pc.features.lookahead = lookahead;  // what the shipped placeto_rl_* models use
    net = PolicyNet(pc);
    g = bench_graph(n);
    gt = make_graph_tensors(g, false);
  }
  PolicyConfig pc;
  PolicyNet net{nullptr};
  Graph g;
  Cluster c = default_cluster(4);
  GraphTensors gt;
};

// What the per-step benchmarks share: the setup, an environment at the start of an episode,
// no autograd, and the feature tensor of one step.
struct StepSetup {
  StepSetup(int n, bool lookahead) : b(n, lookahead), env(b.g, b.c, EnvConfig{}) {
    env.reset(rng);
    x = torch::empty({1, n, b.net->feature_width()});
  }
  BenchSetup b;
  PlacementEnv env;
  std::mt19937_64 rng{1};
  torch::NoGradGuard no_grad;
  torch::Tensor x;
};

void BM_PolicyStep(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  StepSetup s(n, false);
  torch::Tensor cur = torch::zeros({1}, torch::kInt64);
  for (auto _ : state) {
    build_features(s.env, s.b.pc.features, s.x.data_ptr<float>());
    torch::Tensor logits = s.b.net->forward(s.x, cur, s.b.gt);
    benchmark::DoNotOptimize(logits.data_ptr<float>());
  }
  state.counters["nodes"] = n;
}
BENCHMARK(BM_PolicyStep)->Arg(50)->Arg(200)->Arg(500)->Unit(benchmark::kMicrosecond);

// One whole step of a greedy episode on an n-op graph: the features (with lookahead, as the
// shipped Placeto models have it, D - 1 what-if simulations), the forward, the argmax and the
// environment's step (its simulation of the placement).  The episode restarts when every op
// is placed.  Arguments: ops, lookahead (0/1).  Issue #34 item 2 asks how this grows from
// 200 to 20k ops.
void BM_EpisodeStep(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  StepSetup s(n, state.range(1) != 0);
  for (auto _ : state) {
    if (s.env.done()) s.env.reset(s.rng);
    build_features(s.env, s.b.pc.features, s.x.data_ptr<float>());
    torch::Tensor cur = torch::full({1}, static_cast<int64_t>(s.env.current_node()), torch::kInt64);
    torch::Tensor logits = s.b.net->forward(s.x, cur, s.b.gt);
    s.env.step(static_cast<int>(logits.argmax(-1).item<int64_t>()));
  }
  state.counters["nodes"] = n;
}
BENCHMARK(BM_EpisodeStep)->ArgsProduct({{200, 2000, 20000}, {0, 1}})->Unit(benchmark::kMillisecond);

// The same step in hierarchical placement (issue #34 item 2, after): the network runs on the
// coarse graph of at most 64 groups (policy.coarse_groups), with the any-device network of
// policy.any_devices and the memory columns, so its cost does not depend on the graph; with
// fine rewards (policy.fine_rewards, the default) the step's D + 1 simulations run on the
// whole graph, and they are what grows.  Arguments: ops, fine rewards (0/1).
void BM_HierarchicalStep(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  torch::set_num_threads(1);
  torch::manual_seed(0);
  PolicyConfig pc;
  pc.num_devices = 4;
  pc.features.lookahead = true;
  pc.features.memory_features = true;
  pc.features.any_devices = true;
  PolicyNet net(pc);
  const Graph g = bench_graph(n);
  const Cluster c = default_cluster(4);
  const CoarseGraph coarse = coarsen(g, 64);
  const GraphTensors gt = make_graph_tensors(coarse.graph, false);
  PlacementEnv env(coarse.graph, c, EnvConfig{},
                   state.range(1) != 0 ? FineView{&g, &coarse.group} : FineView{});
  std::mt19937_64 rng(1);
  env.reset(rng);
  torch::NoGradGuard no_grad;
  torch::Tensor x = torch::empty({1, coarse.graph.num_nodes(), net->feature_width(4)});
  for (auto _ : state) {
    if (env.done()) env.reset(rng);
    build_features(env, pc.features, x.data_ptr<float>());
    torch::Tensor cur = torch::full({1}, static_cast<int64_t>(env.current_node()), torch::kInt64);
    torch::Tensor logits = net->forward(x, cur, gt);
    env.step(static_cast<int>(logits.argmax(-1).item<int64_t>()));
  }
  state.counters["nodes"] = n;
  state.counters["groups"] = coarse.graph.num_nodes();
}
BENCHMARK(BM_HierarchicalStep)
    ->ArgsProduct({{200, 2000, 20000}, {0, 1}})
    ->Unit(benchmark::kMillisecond);

// Arguments: graph size, episodes run in lockstep (the trainer's episodes_per_iteration).
void BM_TrainingEpisode(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const int k = static_cast<int>(state.range(1));
  BenchSetup b(n);
  auto& [pc, net, g, c, gt] = b;
  std::vector<std::unique_ptr<PlacementEnv>> envs;
  std::vector<PlacementEnv*> batch;
  for (int e = 0; e < k; ++e) {
    envs.push_back(std::make_unique<PlacementEnv>(g, c, EnvConfig{}));
    batch.push_back(envs.back().get());
  }
  std::mt19937_64 rng(1);
  double sim_s = 0, policy_s = 0, backward_s = 0;
  for (auto _ : state) {
    std::vector<EpisodeRecord> recs = run_episodes(net, gt, batch, rng, ActionMode::kSample);
    auto t0 = std::chrono::steady_clock::now();
    net->zero_grad();
    for (const EpisodeRecord& rec : recs) {
      std::vector<double> adv = rec.returns();
      episode_loss(net, gt, rec, adv, 0.01).loss.backward();
      sim_s += rec.sim_seconds;
      policy_s += rec.policy_seconds;
    }
    backward_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  const double total = sim_s + policy_s + backward_s;
  state.counters["episodes_per_s"] =
      benchmark::Counter(static_cast<double>(state.iterations()) * k, benchmark::Counter::kIsRate);
  state.counters["sim_share"] = sim_s / total;
  state.counters["rollout_net_share"] = policy_s / total;
  state.counters["loss_backward_share"] = backward_s / total;
}
BENCHMARK(BM_TrainingEpisode)
    ->Args({50, 1})
    ->Args({200, 1})
    ->Args({200, 4})
    ->Unit(benchmark::kMillisecond)
    ->MinTime(3.0);

}  // namespace
}  // namespace placeto

BENCHMARK_MAIN();
