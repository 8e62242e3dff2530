// placeto_families_report: does placement matter on the generated families?  For each family
// and device count, the best-known placement's speed-up over one device, found by annealing
// over the simulator (launch/local_search.h).  Prints a markdown table (docs/FAMILIES.md).
#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>
#include <sstream>

#include "common/error.h"
#include "launch/local_search.h"
#include "sim/families/family.h"

namespace placeto {
namespace {

struct ReportArgs {
  std::vector<std::string> families{"cifar10", "ptb", "nmt"};
  std::vector<int> devices{2, 3, 5};
  int graphs = 8;
  uint64_t seed = 1;
  int iterations = 20000;
  double target = 1.2;
  FamilySpec overrides;
};

void run_report(const ReportArgs& a) {
  std::printf("| family | D | graphs | median speed-up | min | max | >= %.2fx |\n", a.target);
  std::printf("|---|---|---|---|---|---|---|\n");
  for (const auto& family : a.families) {
    FamilySpec spec = a.overrides;
    spec.family = family;
    std::vector<Graph> graphs;
    for (int i = 0; i < a.graphs; ++i) graphs.push_back(generate_graph(spec, i, a.seed));
    for (int d : a.devices) {
      Cluster c = default_cluster(d);
      std::vector<double> speedups;
      for (const Graph& g : graphs) {
        LocalSearchOptions opt;
        opt.iterations = a.iterations;
        opt.seed = derive_seed(a.seed, static_cast<uint64_t>(d));
        LocalSearchResult r = anneal_placement(g, c, opt);
        speedups.push_back(r.single_device_us / r.best_runtime_us);
        std::fprintf(stderr, "%s D=%d ops=%d single=%.0fus best=%.0fus speed-up=%.3f\n",
                     g.name().c_str(), d, g.num_nodes(), r.single_device_us, r.best_runtime_us,
                     speedups.back());
      }
      std::vector<double> s = speedups;
      std::sort(s.begin(), s.end());
      int hit = 0;
      for (double x : s) hit += x >= a.target;
      const double median =
          s.size() % 2 ? s[s.size() / 2] : 0.5 * (s[s.size() / 2 - 1] + s[s.size() / 2]);
      std::printf("| %s | %d | %zu | %.2f | %.2f | %.2f | %d/%zu |\n", family.c_str(), d, s.size(),
                  median, s.front(), s.back(), hit, s.size());
      std::fflush(stdout);
    }
  }
}

}  // namespace
}  // namespace placeto

int main(int argc, char** argv) {
  placeto::ReportArgs a;
  CLI::App app{"Best-known speed-up over one device on generated graph families"};
  app.add_option("--family", a.families, "Families (default: cifar10 ptb nmt)");
  app.add_option("--devices", a.devices, "Device counts (default: 2 3 5)");
  app.add_option("--graphs", a.graphs, "Graphs per family")->check(CLI::Range(1, 1000));
  app.add_option("--seed", a.seed, "Family seed");
  app.add_option("--iterations", a.iterations, "Simulations per graph and device count");
  app.add_option("--batch", a.overrides.batch, "Override the family's batch size");
  app.add_option("--width", a.overrides.width, "Override channels / hidden size");
  app.add_option("--steps", a.overrides.steps, "Override time steps");
  app.add_option("--layers", a.overrides.layers, "Override layers");
  app.add_option("--cell-nodes", a.overrides.cell_nodes, "Override cell nodes");
  app.add_option("--vocab", a.overrides.vocab, "Override vocabulary size");
  try {
    app.parse(argc, argv);
    placeto::run_report(a);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const placeto::Error& e) {
    std::cerr << "placeto_families_report: error: " << e.what() << std::endl;
    return 2;
  }
  return 0;
}
