// placeto place: run one classical placer on one graph, write the placement and print its
// evaluation as JSON.  An infeasible result (the least-overflowing placement the method found,
// by the memory rule of sim/placers/memory_rule.h) is still written, with "feasible": false, a
// line on stderr that says `infeasible` with every device's need and capacity, and exit status
// 1, so that a user sees how far over capacity the best attempt is and a script sees that it
// does not fit.
// With --ungroup ORIGINAL.json the placed graph is a coarse one: the placement is mapped back
// to every op of the original graph through the group map (sim/coarse_map.h), written as a
// placement of that graph (per ONNX node too when the map records origins) and simulated.
#include <iostream>
#include <memory>
#include <vector>

#include "common/error.h"
#include "common/files.h"
#include "common/json_util.h"
#include "launch/commands.h"
#include "launch/placer_cli.h"
#include "sim/coarse_map.h"
#include "sim/graph_io.h"
#include "sim/placers/evaluation.h"
#include "sim/placers/registry.h"

namespace placeto {
namespace {

std::vector<std::string> start_taking_methods() {
  std::vector<std::string> out;
  for (const PlacerInfo& i : registered_placers())
    if (i.takes_start) out.push_back(i.name);
  return out;
}

struct PlaceArgs {
  std::string graph, method, out, initial, checkpoint;
  std::vector<std::string> checkpoint_set;
  std::string ungroup, map, fine_out;  // mapping a coarse placement back (all or none)
  PlacerCliArgs placer;
};

// The fine graph and its grouping behind the coarse graph, checked before any placing.
struct Ungrouping {
  Graph fine;
  CoarseMap map;
  CoarseGraph coarse;
};

Ungrouping load_ungrouping(PlaceArgs& a, const Graph& coarse) {
  if (a.map.empty()) a.map = companion_path(a.graph, "map");
  if (a.fine_out.empty()) a.fine_out = companion_path(a.out, "fine");
  if (a.fine_out == a.out) throw InputError("--fine-out must differ from --out");
  check_output_path(a.fine_out, {a.graph, a.ungroup, a.map, a.initial, a.out}, "--fine-out");
  Ungrouping u;
  u.fine = load_graph(a.ungroup);
  u.map = read_coarse_map(a.map, u.fine);
  u.coarse = match_coarse_graph(u.map, a.map, u.fine, coarse, a.graph);
  return u;
}

// Writes the fine placement and returns its summary for the printed JSON.
Json write_fine_placement(const PlaceArgs& a, const Ungrouping& u, const Cluster& c,
                          const Placement& coarse_placement) {
  const Placement p = ungroup(u.coarse, coarse_placement);
  const PlacementEvaluation e = evaluate_placement(u.fine, c, p);
  Json doc = placement_to_json(u.fine, p);
  if (!u.map.origins.empty()) doc["onnx_nodes"] = placement_by_onnx_node(u.fine, u.map.origins, p);
  write_file_atomic(a.fine_out, doc.dump(1) + "\n");
  Json out{{"graph", u.fine.name()},       {"ops", u.fine.num_nodes()},
           {"runtime_us", e.runtime_us},   {"peak_mem_bytes", e.peak_mem_bytes},
           {"feasible", e.feasible},       {"lower_bound_us", e.lower_bound_us},
           {"ratio_to_lb", e.ratio_to_lb}, {"out", a.fine_out}};
  if (!e.feasible) out["message"] = describe_infeasibility(c, e);
  return out;
}

// "infeasible: the placement needs more memory than the cluster has (gpu0: need N of
// capacity C bytes, ...)", every device listed.
std::string infeasible_line(const Cluster& c, const PlacementEvaluation& e) {
  std::string s = "infeasible: the placement needs more memory than the cluster has (";
  for (int d = 0; d < c.num_devices(); ++d) {
    const double cap = c.devices[d].memory_bytes;
    s +=
        (d ? "; " : "") + c.devices[d].name + ": need " +
        std::to_string(e.peak_mem_bytes[d] + e.param_bytes[d]) + " of capacity " +
        (cap > 0 ? std::to_string(static_cast<int64_t>(cap)) + " bytes" : std::string("unlimited"));
  }
  return s + ")";
}

void run_place(PlaceArgs a) {
  const PlacerInfo& info = placer_info(a.method);  // first, so a typo fails before any work
  if (info.needs_checkpoint && a.checkpoint.empty())
    throw InputError("--method " + a.method + " needs --checkpoint");
  if (!info.needs_checkpoint && !info.accepts_checkpoint && !a.checkpoint.empty())
    throw InputError("--checkpoint is only used by learned methods (--method " + a.method +
                     " takes none)");
  if (!a.initial.empty() && !info.takes_start)
    throw InputError("--initial is only used by methods that refine a start placement (" +
                     placer_list(start_taking_methods()) + "; got --method " + a.method + ")");
  if (a.ungroup.empty() && (!a.map.empty() || !a.fine_out.empty()))
    throw InputError("--map and --fine-out are only used with --ungroup ORIGINAL.json");
  check_output_path(a.out, {a.graph, a.ungroup, a.map, a.initial, a.checkpoint, a.placer.cluster});
  a.placer.options.checkpoint = a.checkpoint;
  if (!a.checkpoint_set.empty() && a.checkpoint.empty())
    throw InputError("--checkpoint-set needs --checkpoint");
  a.placer.options.checkpoint_overrides = a.checkpoint_set;
  validate_options(info, a.placer.options, "--method " + a.method);
  const Graph g = load_graph(a.graph);
  const Cluster c = cluster_from_cli(a.placer);
  std::unique_ptr<Ungrouping> ungrouping;
  if (!a.ungroup.empty()) ungrouping = std::make_unique<Ungrouping>(load_ungrouping(a, g));
  if (!a.initial.empty()) {
    Placement p = load_placement(a.initial, g);
    if (p.num_devices != c.num_devices())
      throw InputError(a.initial + ": devices: the placement is for " +
                       std::to_string(p.num_devices) + " devices but the cluster has " +
                       std::to_string(c.num_devices()));
    a.placer.options.initial = std::move(p);
  }
  const PlacerRun run = run_placer(*info.make(a.placer.options), g, c, a.placer.options);
  save_placement(g, run.placement, a.out);
  const PlacementEvaluation& e = run.evaluation;
  Json out;
  out["graph"] = g.name();
  out["method"] = run.method;
  out["devices"] = c.num_devices();
  out["seed"] = a.placer.options.seed;
  out["runtime_us"] = e.runtime_us;
  out["peak_mem_bytes"] = e.peak_mem_bytes;
  out["param_bytes"] = e.param_bytes;
  out["feasible"] = e.feasible;
  out["place_ms"] = run.place_ms;
  out["lower_bound_us"] = e.lower_bound_us;
  out["ratio_to_lb"] = e.ratio_to_lb;
  out["out"] = a.out;
  if (ungrouping) out["fine"] = write_fine_placement(a, *ungrouping, c, run.placement);
  if (!run.note.empty()) out["note"] = run.note;
  if (!e.feasible) out["message"] = run.message;
  std::cout << out.dump() << std::endl;
  if (!e.feasible) {
    std::cerr << "placeto: " << infeasible_line(c, e) << "; " << run.message << std::endl;
    throw CLI::RuntimeError(1);  // the placement is written: not an error of the input
  }
}

}  // namespace

void register_place_command(CLI::App& app) {
  auto args = std::make_shared<PlaceArgs>();
  CLI::App* cmd = app.add_subcommand(
      "place",
      "Place a graph with one method.  Exit status 1 when the placement does not fit the "
      "cluster's memory: it is still written (the least-overflowing one found), and stderr "
      "says 'infeasible' with every device's need and capacity");
  cmd->add_option("--graph", args->graph, "Graph file (placeto-graph JSON)")->required();
  cmd->add_option("--method", args->method, "Placement method, one of:\n" + placer_help())
      ->required();
  cmd->add_option("--out", args->out, "Placement file to write (JSON)")->required();
  cmd->add_option("--initial", args->initial, "anneal: start from this placement (JSON)");
  cmd->add_option("--checkpoint", args->checkpoint,
                  "Learned methods: checkpoint file, directory or LATEST");
  cmd->add_option("--checkpoint-set", args->checkpoint_set,
                  "Learned methods: KEY=VALUE overrides of how the checkpoint places, e.g. "
                  "policy.coarse_groups=128 or policy.boundary_sims=0 (repeatable)");
  cmd->add_option("--ungroup", args->ungroup,
                  "--graph is coarse: also write the placement of this original graph and "
                  "simulate it");
  cmd->add_option("--map", args->map,
                  "With --ungroup: the op -> group map (default: --graph with .map.json)");
  cmd->add_option("--fine-out", args->fine_out,
                  "With --ungroup: the original graph's placement (default: --out with "
                  ".fine.json)");
  add_placer_cli_options(cmd, &args->placer);
  cmd->callback([args] { run_place(*args); });
}

}  // namespace placeto
