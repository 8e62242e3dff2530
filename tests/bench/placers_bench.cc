// Placement time of every placer on random layered DAGs of 100, 500 and 2000 ops, 4 devices
// (docs/PERFORMANCE.md, "Placers").  anneal runs with a budget of 200 simulations so that its
// time per simulation can be read off; its default is 2000.
#include <benchmark/benchmark.h>

#include "sim/placers/registry.h"
#include "tests/placers/random_dag.h"

namespace placeto {
namespace {

Graph bench_graph(int ops) {
  testing::RandomDagOptions o;
  o.num_ops = ops;
  o.width = 16;
  return testing::random_layered_dag(o, 2024, "bench_" + std::to_string(ops));
}

void place_graph(benchmark::State& state, const std::string& method) {
  const Graph g = bench_graph(static_cast<int>(state.range(0)));
  const Cluster c = default_cluster(4);
  auto placer = make_placer(method);
  PlacerOptions o;
  o.budget = 200;
  for (auto _ : state) benchmark::DoNotOptimize(placer->place(g, c, o));
  state.counters["ops"] = g.num_nodes();
}

int register_all() {
  for (const std::string& name : placer_names())
    benchmark::RegisterBenchmark(("place/" + name).c_str(), place_graph, name)
        ->Arg(100)
        ->Arg(500)
        ->Arg(2000)
        ->Unit(benchmark::kMillisecond);
  return 0;
}
const int registered = register_all();

}  // namespace
}  // namespace placeto

BENCHMARK_MAIN();
