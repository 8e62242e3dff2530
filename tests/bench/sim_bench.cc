// Simulator throughput: one simulate() of a random placement, as in a training step.
// Run: build/bin/sim_bench --benchmark_min_time=1  (see docs/PERFORMANCE.md)
#include <benchmark/benchmark.h>

#include <type_traits>

#include "sim/hetero_simulator.h"
#include "sim/random_graph.h"
#include "sim/simulator.h"

namespace placeto {
namespace {

// SimT is Simulator (optimised) or HeteroSimulator running the compatible mode (one heap
// event per edge release: the straightforward implementation), measured side by side.
template <typename SimT, bool kMemory>
void BM_Sim(benchmark::State& state) {
  RandomGraphOptions o;
  o.num_nodes = static_cast<int>(state.range(0));
  o.seed = 42;
  Graph g = make_random_graph(o);
  const int d = static_cast<int>(state.range(1));
  Cluster c = default_cluster(d);
  SimT sim(g, c);
  if constexpr (std::is_same_v<SimT, Simulator>) sim.set_compute_memory(kMemory);
  // A few placements, cycled, so that branch predictors do not learn one schedule.
  std::vector<Placement> ps;
  for (int i = 0; i < 8; ++i) ps.push_back(make_random_placement(g, d, 100 + i));
  size_t i = 0;
  double runtime = 0;
  for (auto _ : state) {
    runtime += sim.simulate(ps[i++ & 7]).runtime_us;
  }
  benchmark::DoNotOptimize(runtime);
  state.counters["ops"] = g.num_nodes();
  state.counters["edges"] = g.num_edges();
  state.counters["sims_per_s"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}
void BM_Simulate(benchmark::State& state) { BM_Sim<Simulator, true>(state); }
void BM_SimulateRuntimeOnly(benchmark::State& state) { BM_Sim<Simulator, false>(state); }
void BM_SimulateReference(benchmark::State& state) { BM_Sim<HeteroSimulator, true>(state); }
BENCHMARK(BM_Simulate)
    ->Args({100, 4})
    ->Args({500, 4})
    ->Args({2000, 4})
    ->Args({500, 2})
    ->Args({500, 8})
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_SimulateRuntimeOnly)
    ->Args({100, 4})
    ->Args({500, 4})
    ->Args({2000, 4})
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_SimulateReference)
    ->Args({100, 4})
    ->Args({500, 4})
    ->Args({2000, 4})
    ->Unit(benchmark::kMicrosecond);
// A fixed iteration count, for instruction counting under callgrind.
BENCHMARK(BM_Simulate)->Name("BM_SimulateFixed")->Args({500, 4})->Iterations(1000);

}  // namespace
}  // namespace placeto

BENCHMARK_MAIN();
