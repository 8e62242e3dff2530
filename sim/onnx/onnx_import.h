// `placeto import`: reads an ONNX model into a costed placeto::Graph.
//
// Pipeline: parse the protobuf -> check the opset -> ONNX shape inference -> the importer's
// own propagation for what it leaves unknown (shape_rules.h) -> classify tensors (data,
// parameter, or static: computable at load time) -> one graph op per ONNX node that touches
// data (Identity is folded away; Constant, weight transforms and shape arithmetic disappear)
// -> FLOPs and bytes per op (op_costs.h) -> roofline cost on a device profile -> optionally
// the backward pass and updates (training.h).
//
// Node names in the graph are the ONNX node names, made unique (empty names become
// "<OpType>_<index>", repeats get "_2", "_3", ...); graph inputs become ops named after the
// input (op type "Input", cost 0; suffixed instead of a node when the names clash).  Synthesised
// ops are "<fwd>/grad" and "<fwd>/update".  Every op also records its origin explicitly
// (OpNode::origin; op_origins(result.ops)): the ONNX node's index and name as in the file, or
// the input's name, and its role (input, forward, grad, update).
//
// Models exported without weights work: a graph input that only feeds weight slots
// (Conv W/B, Gemm B/C, MatMul B, norm scales, RNN W/R/B, embedding tables, element-wise
// operands) is taken as a parameter, the others as data; `data_inputs` overrides that.
// Thread-safe: no shared state (ONNX's schema registry is read-only after start-up).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "sim/graph.h"
#include "sim/onnx/op_graph.h"

namespace placeto {

struct ImportOptions {
  // Activations and FLOPs are scaled by batch / (the exported batch, taken as 1); weights are
  // not.  Symbolic (dynamic) input dimensions are set to 1 before inference.  Default 1.
  int64_t batch = 1;
  // Device profile for the roofline cost: a name (sim/cost_model.h) or a profile file
  // (*.yaml, sim/device_profile_yaml.h), such as one fitted by `placeto profile`.
  std::string profile = "k80";
  // The value given to symbolic (dynamic) input dimensions before shape inference.
  int64_t dynamic_dim = 1;
  bool training = false;                 // add backward and update ops (training.h)
  std::vector<std::string> data_inputs;  // graph inputs that carry data; empty = detect
};

struct ImportSummary {
  int onnx_nodes = 0;
  int ops = 0;  // nodes in the written graph
  int edges = 0;
  std::vector<std::string> data_inputs;
  int64_t param_bytes = 0;
  double total_flops = 0;
  double total_cost_us = 0;
  std::map<std::string, int> fallback_op_types;  // op type -> ONNX nodes costed by fallback
  double fallback_cost_us = 0;
  double fallback_share = 0;                         // fallback_cost_us / total_cost_us
  std::map<std::string, double> cost_us_by_op_type;  // graph op type -> summed cost
  int dynamic_dims = 0;          // symbolic input dimensions set to ImportOptions::dynamic_dim
  int own_inferred_tensors = 0;  // shapes filled by shape_rules.h after ONNX inference
  std::vector<std::string> unknown_shape_ops;  // ops left with an unknown output shape
};

struct ImportResult {
  Graph graph;
  OpGraph ops;  // the same graph before costing (FLOPs and bytes per op)
  ImportSummary summary;
};

// Throws InputError naming the file when it is missing, unreadable, not ONNX, truncated, has
// no graph, or uses an opset outside [kMinOnnxOpset, kMaxOnnxOpset].
ImportResult import_onnx(const std::string& path, const ImportOptions& options = {});
// The same from the serialised model in memory; `source` names it in errors.
ImportResult import_onnx_bytes(const std::string& bytes, const std::string& source,
                               const ImportOptions& options = {});

constexpr int64_t kMinOnnxOpset = 7;
constexpr int64_t kMaxOnnxOpset = 17;  // the newest Debian's ONNX 1.12 knows

}  // namespace placeto
