// placeto import: read an ONNX model into a costed graph (sim/onnx/onnx_import.h) and print a
// JSON summary: ops, FLOPs, cost, and the op types costed by the fallback rule with their
// share of the total cost.
#include <iostream>
#include <memory>

#include "common/json_util.h"
#include "launch/commands.h"
#include "sim/graph_io.h"
#include "sim/onnx/onnx_import.h"

namespace placeto {
namespace {

struct ImportArgs {
  std::string model, out;
  ImportOptions options;
};

void run_import(const ImportArgs& a) {
  ImportResult r = import_onnx(a.model, a.options);
  save_graph(r.graph, a.out);
  const ImportSummary& s = r.summary;
  Json out;
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
  cmd->add_option("model", args->model, "ONNX model file")->required();
  cmd->add_option("--out", args->out, "Graph file to write (placeto-graph JSON)")->required();
  cmd->add_option("--batch", args->options.batch,
                  "Batch size: scales activations and FLOPs of a batch-1 export (default 1)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 20));
  cmd->add_option("--profile", args->options.profile, "Device profile for costs (default k80)");
  cmd->add_flag("--training", args->options.training, "Add backward and update ops");
  cmd->add_option("--inputs", args->options.data_inputs,
                  "Graph inputs that carry data (default: detected)")
      ->delimiter(',');
  cmd->callback([args] { run_import(*args); });
}

}  // namespace placeto
