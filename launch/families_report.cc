// placeto_families_report: does placement matter on the generated families?  For each family
// and device count, the best-known placement's speed-up over one device, found by the
// project's annealer (sim/placers, "anneal") with moves of an op together with its gradient
// and update ops.  Prints a markdown table (docs/FAMILIES.md).
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <sstream>

#include "common/error.h"
#include "common/rng.h"
#include "sim/coarsen.h"
#include "sim/families/family.h"
#include "sim/graph_io.h"
#include "sim/placers/registry.h"
#include "sim/simulator.h"

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
  std::vector<int> coarsen_groups;       // non-empty: the coarsening report instead
  std::vector<std::string> graph_files;  // coarsening report on these graphs, not families
};

// Family graphs of at most 300 ops for the coarsening report.
struct Search {
  Placement best;
  double best_us = 0;
  double single_us = 0;  // every op on device 0
};

// The best-known placement: anneal with `iterations` simulations.  By default it starts from
// the best fast placer and half of its moves take an op with its training ops
// (training_op_groups); with `tied`, every move takes a whole group of `tied` and the search
// starts from `start` (which must keep each group on one device).
Search best_known(const Graph& g, const Cluster& c, int iterations, uint64_t seed,
                  const std::vector<int32_t>* tied = nullptr, const Placement* start = nullptr) {
  PlacerOptions o;
  o.seed = static_cast<int64_t>(seed);
  o.budget = iterations;
  o.move_groups = tied ? *tied : training_op_groups(g);
  o.move_groups_only = tied != nullptr;
  if (start) o.initial = *start;
  Search r;
  r.best = make_placer("anneal")->place(g, c, o);
  Simulator sim(g, c);
  r.best_us = sim.simulate(r.best).runtime_us;
  r.single_us = sim.simulate(Placement(c.num_devices(), g.num_nodes(), 0)).runtime_us;
  return r;
}

FamilySpec small_spec(const std::string& family) {
  FamilySpec s;
  s.family = family;
  if (family == "cifar10") s.layers = 1;
  if (family == "ptb") s.steps = 6;
  if (family == "nmt") s.steps = 4;
  return s;
}

// The graphs of the coarsening report: the given files, else small family graphs.
std::vector<Graph> coarsen_report_graphs(const ReportArgs& a) {
  std::vector<Graph> graphs;
  for (const auto& path : a.graph_files) graphs.push_back(load_graph(path));
  if (!graphs.empty()) return graphs;
  for (const auto& family : a.families)
    for (int i = 0; i < a.graphs; ++i)
      graphs.push_back(generate_graph(small_spec(family), i, a.seed));
  return graphs;
}

// Per graph and K: cut bytes of coarsen() vs topological chunking, and on D devices the
// runtime of the best coarse placement mapped back to the ops ("ungrouped"), of the best
// placement that keeps groups together ("space"), and of the best placement of the ops found
// by any search: annealing from one device, and annealing from each "space" optimum (so the
// gaps are >= 0).  The same annealing budget for every search.
void run_coarsen_report(const ReportArgs& a) {
  std::printf(
      "| graph | ops | K | D | cut MB (coarsen) | cut MB (chunks) | best coarse, ungrouped (ms) "
      "| best in coarse space (ms) | best fine (ms) | gap | gap (space) |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|\n");
  struct Row {
    int k;
    double cut, chunk, ungrouped, space;
  };
  for (const Graph& g : coarsen_report_graphs(a)) {
    for (int d : a.devices) {
      Cluster c = default_cluster(d);
      const uint64_t seed = derive_seed(a.seed, static_cast<uint64_t>(d));
      double fine = best_known(g, c, a.iterations, seed).best_us;
      std::vector<Row> rows;
      for (int k : a.coarsen_groups) {
        if (k >= g.num_nodes()) continue;  // nothing to group
        CoarseGraph cg = coarsen(g, k);
        Row row{cg.graph.num_nodes(), static_cast<double>(cut_bytes(g, cg.group)),
                static_cast<double>(cut_bytes(g, chunk_topological(g, k).group)), 0, 0};
        const Search r = best_known(cg.graph, c, a.iterations, seed);
        Simulator sim(g, c);
        row.ungrouped = sim.simulate(ungroup(cg, r.best)).runtime_us;
        // The search over the coarse graph's placements, scored on the ops themselves, from
        // the best fast placement of the coarse graph.
        const Placement coarse_start = ungroup(cg, best_fast_placement(cg.graph, c, {}));
        const Search space = best_known(g, c, a.iterations, seed, &cg.group, &coarse_start);
        row.space = space.best_us;
        Search refined_search = best_known(g, c, a.iterations, seed, nullptr, &space.best);
        const double refined = refined_search.best_us;
        fine = std::min({fine, refined, row.space, row.ungrouped});
        std::fprintf(stderr,
                     "%s K=%d D=%d single %.0f coarse-sim best %.0f ungrouped %.0f space %.0f "
                     "refined %.0f\n",
                     g.name().c_str(), k, d, r.single_us, r.best_us, row.ungrouped, row.space,
                     refined);
        rows.push_back(row);
      }
      for (const Row& row : rows)
        std::printf(
            "| %s | %d | %d | %d | %.1f | %.1f | %.2f | %.2f | %.2f | %+.1f%% | %+.1f%% |\n",
            g.name().c_str(), g.num_nodes(), row.k, d, row.cut / 1e6, row.chunk / 1e6,
            row.ungrouped / 1e3, row.space / 1e3, fine / 1e3, 100.0 * (row.ungrouped / fine - 1),
            100.0 * (row.space / fine - 1));
      std::fflush(stdout);
    }
  }
}

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
        const Search r =
            best_known(g, c, a.iterations, derive_seed(a.seed, static_cast<uint64_t>(d)));
        speedups.push_back(r.single_us / r.best_us);
        std::fprintf(stderr, "%s D=%d ops=%d single=%.0fus best=%.0fus speed-up=%.3f\n",
                     g.name().c_str(), d, g.num_nodes(), r.single_us, r.best_us, speedups.back());
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
  app.add_option("--coarsen", a.coarsen_groups,
                 "Group counts K: report coarsening (graphs of <= 300 ops) instead");
  app.add_option("--graph-file", a.graph_files,
                 "With --coarsen: report on these graph files (e.g. imported ONNX models) "
                 "instead of the families");
  try {
    app.parse(argc, argv);
    if (a.coarsen_groups.empty())
      placeto::run_report(a);
    else
      placeto::run_coarsen_report(a);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const placeto::Error& e) {
    std::cerr << "placeto_families_report: error: " << e.what() << std::endl;
    return 2;
  }
  return 0;
}
