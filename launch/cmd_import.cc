// placeto import: read an ONNX model into a costed graph (sim/onnx/onnx_import.h) and print a
// JSON summary: ops, FLOPs, cost, and the op types costed by the fallback rule with their
// share of the total cost.  With --groups K the written graph is the model coarsened to at
// most K nodes (sim/coarsen.h); the full graph and the op -> group map (with each op's ONNX
// origin, sim/coarse_map.h) are written beside it for `placeto place --ungroup`.  With
// --groups by-module the groups are the PyTorch modules of the node names
// (sim/onnx/module_groups.h).
#include <iostream>
#include <memory>

#include "common/error.h"
#include "common/files.h"
#include "common/json_util.h"
#include "launch/commands.h"
#include "sim/coarse_map.h"
#include "sim/graph_io.h"
#include "sim/onnx/module_groups.h"
#include "sim/onnx/onnx_import.h"

namespace placeto {
namespace {

struct ImportArgs {
  std::string model, out, fine_out, map;
  std::string groups_arg;  // "", a count K or "by-module"
  int groups = 0;          // K; 0: no coarsening
  bool by_module = false;
  ImportOptions options;
};

void run_import(ImportArgs a) {
  if (a.groups_arg == "by-module") {
    a.by_module = true;
  } else if (!a.groups_arg.empty()) {
    size_t used = 0;
    long long k = 0;
    try {
      k = std::stoll(a.groups_arg, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != a.groups_arg.size() || k < 1 || k > (1 << 30))
      throw InputError("--groups: expected a count in [1, 2^30] or by-module, got " +
                       quoted_name(a.groups_arg));
    a.groups = static_cast<int>(k);
  }
  const bool grouped = a.groups > 0 || a.by_module;
  if (!grouped && (!a.fine_out.empty() || !a.map.empty()))
    throw InputError("--fine-out and --map are written only with --groups K|by-module");
  check_output_path(a.out, {a.model});
  ImportResult r = import_onnx(a.model, a.options);
  Json out;
  if (grouped) {
    if (a.fine_out.empty()) a.fine_out = companion_path(a.out, "fine");
    if (a.map.empty()) a.map = companion_path(a.out, "map");
    if (a.fine_out == a.out || a.map == a.out || a.map == a.fine_out)
      throw InputError("--out, --fine-out and --map must be different files");
    const std::vector<OpOrigin> origins = op_origins(r.ops);
    ModuleGrouping by_module;
    if (a.by_module) by_module = group_by_module(r.graph, origins, a.model);
    const CoarseGraph c = a.by_module ? by_module.coarse : coarsen(r.graph, a.groups);
    check_output_path(a.fine_out, {a.model}, "--fine-out");
    check_output_path(a.map, {a.model}, "--map");
    save_graph(r.graph, a.fine_out);
    save_coarse_map(r.graph, c, a.map, &origins);
    save_graph(c.graph, a.out);  // last: its presence means the three files agree
    out["fine_graph"] = a.fine_out;
    out["map"] = a.map;
    out["groups"] = c.graph.num_nodes();
    out["cut_bytes"] = cut_bytes(r.graph, c.group);
    out["chunked_cut_bytes"] = cut_bytes(
        r.graph, chunk_topological(r.graph, a.by_module ? c.graph.num_nodes() : a.groups).group);
    if (a.by_module) {
      out["modules"] = by_module.labels;  // per node of the coarse graph
      out["collapsed_modules"] = by_module.collapsed;
      out["unscoped_ops"] = by_module.unscoped_ops;
    }
  } else {
    save_graph(r.graph, a.out);
  }
  const ImportSummary& s = r.summary;
  out["model"] = a.model;
  out["graph"] = a.out;
  out["name"] = r.graph.name();
  out["onnx_nodes"] = s.onnx_nodes;
  out["ops"] = s.ops;
  out["edges"] = s.edges;
  out["batch"] = a.options.batch;
  out["profile"] = a.options.profile;
  out["training"] = a.options.training;
  out["data_inputs"] = s.data_inputs;
  out["param_bytes"] = s.param_bytes;
  out["total_flops"] = s.total_flops;
  out["total_cost_us"] = s.total_cost_us;
  out["critical_path_us"] = r.graph.critical_path_us();
  Json fallback = Json::object();
  for (const auto& [type, count] : s.fallback_op_types) fallback[type] = count;
  out["fallback_op_types"] = fallback;
  Json by_type = Json::object();
  for (const auto& [type, cost] : s.cost_us_by_op_type) by_type[type] = cost;
  out["cost_us_by_op_type"] = by_type;
  out["fallback_cost_us"] = s.fallback_cost_us;
  out["fallback_share"] = s.fallback_share;
  out["own_inferred_tensors"] = s.own_inferred_tensors;
  out["unknown_shape_ops"] = static_cast<int64_t>(s.unknown_shape_ops.size());
  std::cout << out.dump() << std::endl;
}

}  // namespace

void register_import_command(CLI::App& app) {
  auto args = std::make_shared<ImportArgs>();
  CLI::App* cmd =
      app.add_subcommand("import", "Read an ONNX model into a graph; prints a JSON summary");
  cmd->add_option("model,--model", args->model, "ONNX model file")->required();
  cmd->add_option("--out", args->out,
                  "Graph file to write (placeto-graph JSON); with --groups the coarse graph")
      ->required();
  cmd->add_option("--batch", args->options.batch,
                  "Batch size: scales activations and FLOPs of a batch-1 export (default 1)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 20));
  cmd->add_option("--profile", args->options.profile, "Device profile for costs (default k80)");
  cmd->add_flag("--training", args->options.training, "Add backward and update ops");
  cmd->add_option("--inputs", args->options.data_inputs,
                  "Graph inputs that carry data (default: detected)")
      ->delimiter(',');
  cmd->add_option("--groups", args->groups_arg,
                  "Coarsen to at most K nodes, or by-module (one group per PyTorch module): --out "
                  "gets the coarse graph, --fine-out the full one, --map the op -> group map");
  cmd->add_option("--fine-out", args->fine_out,
                  "With --groups: the full graph (default: --out with .fine.json)");
  cmd->add_option("--map", args->map,
                  "With --groups: the op -> group map (default: --out with .map.json)");
  cmd->callback([args] { run_import(*args); });
}

}  // namespace placeto
