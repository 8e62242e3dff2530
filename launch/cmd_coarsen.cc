// placeto coarsen: group a graph into at most K nodes (sim/coarsen.h), writing the coarse
// graph and the op -> group map; with --placement, map a coarse placement back to every op.
#include <iostream>
#include <memory>

#include "common/error.h"
#include "common/files.h"
#include "common/json_util.h"
#include "launch/commands.h"
#include "sim/coarse_map.h"
#include "sim/graph_io.h"

namespace placeto {
namespace {

struct CoarsenArgs {
  std::string graph, out, map, placement, fine_out;
  int groups = 0;
};

void run_coarsen(const CoarsenArgs& a) {
  if (!a.fine_out.empty())
    check_output_path(a.fine_out, {a.graph, a.map, a.placement}, "--fine-out");
  if (!a.out.empty()) check_output_path(a.out, {a.graph, a.placement}, "--out");
  if (!a.map.empty() && a.placement.empty()) check_output_path(a.map, {a.graph}, "--map");
  Graph g = load_graph(a.graph);
  CoarseGraph c;
  if (!a.placement.empty()) {
    // Mapping back: the map file must exist; the placement is for the coarse graph.
    if (a.map.empty() || a.fine_out.empty())
      throw InputError("--placement needs --map (an existing map file) and --fine-out");
    c = load_coarse_map(a.map, g);
    Placement coarse = load_placement(a.placement, c.graph);
    save_placement(g, ungroup(c, coarse), a.fine_out);
    std::cout
        << Json{{"graph", g.name()}, {"ops", g.num_nodes()}, {"fine_placement", a.fine_out}}.dump()
        << std::endl;
    return;
  }
  if (a.groups < 1 || a.out.empty())
    throw InputError("coarsening needs --groups K (>= 1) and --out");
  c = coarsen(g, a.groups);
  save_graph(c.graph, a.out);
  if (!a.map.empty()) save_coarse_map(g, c, a.map);
  std::cout << Json{{"graph", g.name()},
                    {"ops", g.num_nodes()},
                    {"groups", c.graph.num_nodes()},
                    {"cut_bytes", cut_bytes(g, c.group)},
                    {"chunked_cut_bytes", cut_bytes(g, chunk_topological(g, a.groups).group)},
                    {"out", a.out}}
                   .dump()
            << std::endl;
}

}  // namespace

void register_coarsen_command(CLI::App& app) {
  auto a = std::make_shared<CoarsenArgs>();
  CLI::App* cmd = app.add_subcommand(
      "coarsen", "Group a graph into at most K nodes, or map a coarse placement back to ops");
  cmd->add_option("--graph", a->graph, "Graph file (placeto-graph JSON)")->required();
  cmd->add_option("--groups", a->groups, "At most this many groups")->check(CLI::Range(1, 1 << 30));
  cmd->add_option("--out", a->out, "Coarse graph file to write");
  cmd->add_option("--map", a->map, "Group map file (written, or read with --placement)");
  cmd->add_option("--placement", a->placement, "A placement of the coarse graph to map back");
  cmd->add_option("--fine-out", a->fine_out, "Where to write the per-op placement");
  cmd->callback([a] { run_coarsen(*a); });
}

}  // namespace placeto
