// The learned search's costs per step on a default-size ptb graph (360 ops) at 2-4 devices
// (docs/PERFORMANCE.md, "Learned search"): one simulation, the what-if features of every
// move, and one scorer pass over them.  A refresh of the ranking costs features + scorer;
// a step of the search costs one simulation.  The scorer is timed at the per-family models'
// width and at the default model's.
#include <benchmark/benchmark.h>

#include "improve/move_scorer.h"
#include "improve/what_if.h"
#include "sim/families/family.h"
#include "sim/placers/registry.h"
#include "sim/simulator.h"

namespace placeto {
namespace {

// A graph, its best fast placement simulated, and the what-if rows of that placement.
struct Setup {
  Graph g;
  Cluster c;
  Placement p;
  Simulator sim;
  WhatIf what_if;
  std::vector<float> features;
  std::vector<Move> moves;
  explicit Setup(int devices)
      : g(generate_graph(resolve_family_spec(default_family_spec("ptb")), 0, 4242)),
        c(default_cluster(devices)),
        p(best_fast_placement(g, c, PlacerOptions{})),
        sim(g, c),
        what_if(g, c) {
    sim.simulate(p);
    what_if.compute(sim, p, &features, &moves);
  }
};

void simulate(benchmark::State& state) {
  Setup s(static_cast<int>(state.range(0)));
  for (auto _ : state) benchmark::DoNotOptimize(s.sim.simulate(s.p).runtime_us);
  state.counters["ops"] = s.g.num_nodes();
}

void what_if(benchmark::State& state) {
  Setup s(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    s.what_if.compute(s.sim, s.p, &s.features, &s.moves);
    benchmark::DoNotOptimize(s.features.data());
  }
  state.counters["pairs"] = static_cast<double>(s.moves.size());
}

void scorer(benchmark::State& state) {
  Setup s(static_cast<int>(state.range(0)));
  const int hidden1 = static_cast<int>(state.range(1));
  // The build of the forward pass: 0 the baseline, 1 AVX2, 2 AVX-512.
  const auto kernel = static_cast<ScorerKernel>(state.range(2));
  if (MoveScorer::force_kernel_for_testing(kernel) != kernel) {
    MoveScorer::force_kernel_for_testing(ScorerKernel::kBest);
    state.SkipWithError("this CPU lacks the kernel's instructions");
    return;
  }
  MoveScorer m(ScorerShape{WhatIf::kNumFeatures, hidden1, hidden1 / 2});
  m.init(1);
  std::vector<float> out(s.moves.size());
  for (auto _ : state) {
    m.score(s.features.data(), s.moves.size(), out.data());
    benchmark::DoNotOptimize(out.data());
  }
  MoveScorer::force_kernel_for_testing(ScorerKernel::kBest);
  state.counters["pairs"] = static_cast<double>(s.moves.size());
}

BENCHMARK(simulate)->Arg(2)->Arg(3)->Arg(4)->Unit(benchmark::kMicrosecond);
BENCHMARK(what_if)->Arg(2)->Arg(3)->Arg(4)->Unit(benchmark::kMicrosecond);
// The per-family scorers' width (32, 16) and the default model's (64, 32), with each build
// of the forward pass (baseline, AVX2, AVX-512).
BENCHMARK(scorer)->ArgsProduct({{2, 3, 4}, {32, 64}, {0, 1, 2}})->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace placeto

BENCHMARK_MAIN();
