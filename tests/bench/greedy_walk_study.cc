// What a policy that always takes the simulator's best device reaches: one greedy episode of
// the Placeto environment per graph (PlacementEnv::what_if_devices, the lookahead columns'
// source), for a given episode shape.  The "why" table of experiments/RESULTS.md section 9.
//
//   greedy_walk_study --start fixed_random --action coarse --levels 8,1 [--passes P]
//                     [--devices D] GRAPH.json...
// Prints, per graph, the steps, the walk's runtime over metis's and over single's, and the
// geometric means.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "actors/environment.h"
#include "common/error.h"
#include "sim/graph_io.h"
#include "sim/placers/registry.h"
#include "sim/simulator.h"

namespace placeto {
namespace {

std::vector<int> parse_levels(const std::string& text) {
  std::vector<int> out;
  size_t i = 0;
  while (i < text.size()) {
    size_t j = text.find(',', i);
    if (j == std::string::npos) j = text.size();
    out.push_back(std::atoi(text.substr(i, j - i).c_str()));
    i = j + 1;
  }
  return out;
}

int run(int argc, char** argv) {
  EnvConfig cfg;
  cfg.reward = RewardKind::kIncumbent;
  int devices = 3;
  std::vector<std::string> graphs;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw InputError("greedy_walk_study: " + a + " needs a value");
      return argv[++i];
    };
    if (a == "--start") {
      cfg.start = parse_episode_start(value(), "--start");
    } else if (a == "--action") {
      const std::string v = value();
      const auto parsed = parse_enum(v, kActionUnitNames);
      if (!parsed) throw InputError("greedy_walk_study: --action " + v + ": op, op_group, coarse");
      cfg.action = *parsed;
    } else if (a == "--levels") {
      cfg.levels = parse_levels(value());
    } else if (a == "--passes") {
      cfg.passes = std::atoi(value().c_str());
    } else if (a == "--devices") {
      devices = std::atoi(value().c_str());
    } else {
      graphs.push_back(a);
    }
  }
  validate_env_config(cfg, "command line");
  if (graphs.empty()) throw InputError("greedy_walk_study: no graphs given");
  double log_metis = 0, log_single = 0;
  for (const std::string& path : graphs) {
    const Graph g = load_graph(path);
    const Cluster c = default_cluster(devices);
    PlacementEnv env(g, c, cfg);
    std::mt19937_64 rng(1);
    env.reset(rng);
    std::vector<double> what_if;
    while (!env.done()) {
      env.what_if_devices(&what_if);
      int best = 0;
      for (int d = 1; d < devices; ++d)
        if (what_if[d] < what_if[best]) best = d;
      env.step(best);
    }
    Simulator sim(g, c);
    PlacerOptions o;
    o.seed = 1;
    const double metis = sim.simulate(make_placer("metis")->place(g, c, o)).runtime_us;
    const double single = sim.simulate(make_placer("single")->place(g, c, o)).runtime_us;
    const double walk = env.best_runtime_us();
    std::printf("%s  steps %zu  vs metis %.3f  vs single %.3f\n", path.c_str(), env.order().size(),
                walk / metis, walk / single);
    log_metis += std::log(walk / metis);
    log_single += std::log(walk / single);
  }
  const double n = static_cast<double>(graphs.size());
  std::printf("geometric mean  vs metis %.3f  vs single %.3f\n", std::exp(log_metis / n),
              std::exp(log_single / n));
  return 0;
}

}  // namespace
}  // namespace placeto

int main(int argc, char** argv) {
  try {
    return placeto::run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
}
