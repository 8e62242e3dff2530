// placeto sim: simulate one placement of one graph and print the result as JSON.
#include <chrono>
#include <iostream>
#include <memory>

#include "common/error.h"
#include "common/files.h"
#include "common/json_util.h"
#include "launch/commands.h"
#include "sim/cluster.h"
#include "sim/graph_io.h"
#include "sim/simulator.h"
#include "sim/trace.h"

namespace placeto {
namespace {

struct SimArgs {
  std::string graph, placement, cluster, trace;
  int devices = 0;
  int repeat = 0;
};

void run_sim(const SimArgs& a) {
  if (!a.trace.empty()) check_output_path(a.trace, {a.graph, a.placement, a.cluster}, "--trace");
  Graph g = load_graph(a.graph);
  Placement p = load_placement(a.placement, g);
  const Cluster c = resolve_cluster(a.cluster, a.devices, p.num_devices);
  if (p.num_devices != c.num_devices())
    throw InputError(a.placement + ": devices: the placement is for " +
                     std::to_string(p.num_devices) + " devices but the cluster has " +
                     std::to_string(c.num_devices()));
  Simulator sim(g, c);
  ExecutionTrace trace;
  const SimResult& r = sim.simulate(p, a.trace.empty() ? nullptr : &trace);
  Json out;
  out["graph"] = g.name();
  out["ops"] = g.num_nodes();
  out["edges"] = g.num_edges();
  out["devices"] = c.num_devices();
  out["runtime_us"] = r.runtime_us;
  out["peak_mem_bytes"] = r.peak_mem_bytes;
  out["param_bytes"] = r.param_bytes;
  out["memory_ok"] = r.memory_ok;
  if (c.has_memory_limits()) {
    Json over = Json::array();
    for (int d = 0; d < c.num_devices(); ++d)
      if (r.over_capacity[d]) over.push_back(d);
    out["over_capacity_devices"] = over;
  }
  if (!a.trace.empty()) save_chrome_trace(g, c, trace, a.trace);
  if (a.repeat > 0) {
    sim.simulate(p);  // warm-up
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < a.repeat; ++i) sim.simulate(p);
    double us =
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
    out["repeat"] = a.repeat;
    out["sim_us"] = us / a.repeat;
  }
  std::cout << out.dump() << std::endl;
}

}  // namespace

void register_sim_command(CLI::App& app) {
  auto args = std::make_shared<SimArgs>();
  CLI::App* cmd = app.add_subcommand("sim", "Simulate one placement of a graph; prints JSON");
  cmd->add_option("--graph", args->graph, "Graph file (placeto-graph JSON)")->required();
  cmd->add_option("--placement", args->placement, "Placement file (JSON)")->required();
  cmd->add_option("--devices", args->devices, "Device count (default: the placement's)")
      ->check(CLI::Range(1, 4096));
  cmd->add_option("--cluster", args->cluster, "Cluster description (YAML)");
  cmd->add_option("--trace", args->trace, "Write the schedule as a Chrome trace (JSON)");
  cmd->add_option("--repeat", args->repeat, "Simulate N more times and report sim_us")
      ->check(CLI::Range(0, 100000000));
  cmd->callback([args] { run_sim(*args); });
}

}  // namespace placeto
