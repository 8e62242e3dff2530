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
// The benchmark graph, with its last op's cost set to 0 when `zero_cost_op`: graphs with
// zero-cost ops take the simulator's exact path (0-byte transfers as bus events).
Graph bench_graph(int num_nodes, bool zero_cost_op) {
  RandomGraphOptions o;
  o.num_nodes = num_nodes;
  o.seed = 42;
  Graph base = make_random_graph(o);
  if (!zero_cost_op) return base;
  GraphBuilder b(base.name());
  for (NodeId v = 0; v < base.num_nodes(); ++v) {
    std::vector<int64_t> outs;
    for (int k = 0; k < base.num_outputs(v); ++k) outs.push_back(base.out_bytes(v, k));
    b.add_node(base.node_name(v), "", v == base.num_nodes() - 1 ? 0.0 : base.cost_us(v), outs);
  }
  for (EdgeId e = 0; e < base.num_edges(); ++e)
    b.add_edge(base.edge_src(e), base.edge_dst(e), base.edge_out(e));
  return b.build();
}

template <typename SimT, bool kMemory, bool kZeroCostOp = false>
void BM_Sim(benchmark::State& state) {
  Graph g = bench_graph(static_cast<int>(state.range(0)), kZeroCostOp);
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
void BM_SimulateExactPath(benchmark::State& state) { BM_Sim<Simulator, true, true>(state); }
void BM_SimulateExactPathRuntimeOnly(benchmark::State& state) {
  BM_Sim<Simulator, false, true>(state);
}
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
BENCHMARK(BM_SimulateExactPath)->Args({500, 4})->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_SimulateExactPathRuntimeOnly)->Args({500, 4})->Unit(benchmark::kMicrosecond);
// A fixed iteration count, for instruction counting under callgrind.
BENCHMARK(BM_Simulate)->Name("BM_SimulateFixed")->Args({500, 4})->Iterations(1000);

}  // namespace
}  // namespace placeto

BENCHMARK_MAIN();
