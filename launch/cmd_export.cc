// placeto export: a fine placement of an imported ONNX model in a form a framework applies
// (sim/onnx/onnx_export.h): the ONNX model annotated with devices, a PyTorch module -> device
// map, or pipeline stages.  With --format torch-device-map and --graph (the fine graph) the
// op-level placement and the module-level one PyTorch runs are both simulated.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <iostream>
#include <memory>

#include "common/error.h"
#include "common/files.h"
#include "common/json_util.h"
#include "launch/commands.h"
#include "sim/cluster.h"
#include "sim/graph_io.h"
#include "sim/onnx/onnx_export.h"
#include "sim/placers/evaluation.h"

namespace placeto {
namespace {

struct ExportArgs {
  std::string placement, model, format, out, graph, cluster;
  std::string device_prefix = "cuda:";
  std::vector<std::string> data_inputs;
  int devices = 0;
};

Json evaluation_json(const PlacementEvaluation& e) {
  return Json{{"runtime_us", e.runtime_us},
              {"peak_mem_bytes", e.peak_mem_bytes},
              {"feasible", e.feasible},
              {"lower_bound_us", e.lower_bound_us},
              {"ratio_to_lb", e.ratio_to_lb}};
}

// Simulates the placement as given and the module-level one (every op of a module on the
// module's device) on the fine graph `a.graph`.
Json simulate_both(const ExportArgs& a, const ModelPlacement& p, const TorchDeviceMap& m) {
  const Graph g = load_graph(a.graph);
  if (g.name() != p.model.graph.name())
    throw InputError(a.graph + ": name: the graph is " + quoted_name(g.name()) + " but the model " +
                     a.model + " imports as " + quoted_name(p.model.graph.name()) +
                     " (the fine graph of another model?)");
  const Cluster c = resolve_cluster(a.cluster, a.devices, p.num_devices);
  Placement op_level = load_placement(a.placement, g);
  for (NodeId v = 0; v < g.num_nodes(); ++v)
    if (op_level.device[v] >= c.num_devices())
      throw_input_error(a.placement, "placement." + quoted_name(g.node_name(v)),
                        "device " + std::to_string(op_level.device[v]) +
                            " is outside the cluster's " + std::to_string(c.num_devices()) +
                            " devices");
  op_level.num_devices = c.num_devices();
  Placement module_level(c.num_devices(), g.num_nodes());
  int moved = 0;
  for (NodeId v = 0; v < g.num_nodes(); ++v) {
    const NodeId u = p.model.graph.find(g.node_name(v));
    if (u < 0)
      throw_input_error(
          a.graph, "nodes " + quoted_name(g.node_name(v)),
          "no op of that name in the model " + a.model + " (the fine graph of another model?)");
    module_level.device[v] = m.module_device[u];
    moved += module_level.device[v] != op_level.device[v];
  }
  const PlacementEvaluation eo = evaluate_placement(g, c, op_level);
  const PlacementEvaluation em = evaluate_placement(g, c, module_level);
  return Json{{"graph", a.graph},
              {"ops", g.num_nodes()},
              {"devices", c.num_devices()},
              {"op_level", evaluation_json(eo)},
              {"module_level", evaluation_json(em)},
              {"ops_moved", moved},
              {"equal", moved == 0}};
}

void run_export(const ExportArgs& a) {
  static const std::initializer_list<std::string> kFormats = {"onnx", "torch-device-map", "stages"};
  if (std::find(kFormats.begin(), kFormats.end(), a.format) == kFormats.end()) {
    const std::string hint = did_you_mean(a.format, kFormats);
    throw InputError("--format: unknown format " + quoted_name(a.format) +
                     " (expected onnx, torch-device-map or stages" +
                     (hint.empty() ? "" : "; did you mean " + hint + "?") + ")");
  }
  if (!a.graph.empty() && a.format != "torch-device-map")
    throw InputError("--graph is only used with --format torch-device-map (got --format " +
                     a.format + ")");
  check_output_path(a.out, {a.placement, a.model, a.graph, a.cluster});
  int cluster_devices = 0;
  if (!a.cluster.empty() || a.devices > 0)
    cluster_devices = resolve_cluster(a.cluster, a.devices).num_devices();
  // The model was imported before; its import warnings (unknown shapes, fallback costs) are
  // not news here.
  const spdlog::level::level_enum level = spdlog::get_level();
  spdlog::set_level(std::max(level, spdlog::level::err));
  ModelPlacement p;
  try {
    p = read_model_placement(a.placement, a.model, a.data_inputs, cluster_devices);
  } catch (...) {
    spdlog::set_level(level);
    throw;
  }
  spdlog::set_level(level);
  Json out{{"format", a.format}, {"model", a.model},         {"placement", a.placement},
           {"out", a.out},       {"devices", p.num_devices}, {"training", p.training}};
  if (a.format == "onnx") {
    write_file_atomic(a.out, annotate_onnx(p, a.device_prefix));
    int annotated = 0;
    for (int d : p.node_device) annotated += d >= 0;
    out["onnx_nodes"] = static_cast<int64_t>(p.node_device.size());
    out["annotated_nodes"] = annotated;
  } else if (a.format == "torch-device-map") {
    const TorchDeviceMap m = torch_device_map(p, a.device_prefix);
    Json sim;
    if (!a.graph.empty()) sim = simulate_both(a, p, m);
    write_file_atomic(a.out, m.doc.dump(1) + "\n");
    out["modules"] = m.doc["device_map"].size();
    out["inexact_modules"] = m.inexact_modules;
    out["unscoped_ops"] = m.unscoped_ops;
    if (m.inexact_modules > 0)
      std::cerr << "placeto: warning: " << m.inexact_modules
                << " modules have forward ops on several devices; each gets the device most of "
                   "them use (see inexact_modules in "
                << a.out << "; import with --groups by-module for an exact map)" << std::endl;
    if (!sim.is_null()) out["simulation"] = sim;
  } else {
    const Json stages = pipeline_stages(p, a.device_prefix);
    write_file_atomic(a.out, stages.dump(1) + "\n");
    out["stages"] = stages["stages"].size();
  }
  std::cout << out.dump() << std::endl;
}

}  // namespace

void register_export_command(CLI::App& app) {
  auto args = std::make_shared<ExportArgs>();
  CLI::App* cmd = app.add_subcommand(
      "export", "Write a placement of an imported ONNX model for a framework; prints JSON");
  cmd->add_option("--placement", args->placement,
                  "Fine placement of the imported graph (placeto place [--ungroup])")
      ->required();
  cmd->add_option("--onnx,--model", args->model, "The ONNX model that was imported")->required();
  cmd->add_option("--format", args->format, "onnx, torch-device-map or stages")->required();
  cmd->add_option("--out", args->out, "File to write")->required();
  cmd->add_option("--graph", args->graph,
                  "torch-device-map: the fine graph; simulate the op-level and the module-level "
                  "placement");
  cmd->add_option("--devices", args->devices, "Device count of the cluster")
      ->check(CLI::Range(1, 4096));
  cmd->add_option("--cluster", args->cluster, "Cluster description (YAML)");
  cmd->add_option("--device-prefix", args->device_prefix,
                  "Device names are the prefix and the index (default cuda:)");
  cmd->add_option("--inputs", args->data_inputs,
                  "Graph inputs that carry data, as given to placeto import --inputs")
      ->delimiter(',');
  cmd->callback([args] { run_export(*args); });
}

}  // namespace placeto
