// The importer's intermediate graph: ops with FLOPs and bytes still apart (the training
// synthesis scales them), turned into a costed placeto::Graph at the end.
//
// Plain data; not thread-safe to mutate, safe to read concurrently.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/cost_model.h"
#include "sim/graph.h"
#include "sim/onnx/op_costs.h"
#include "sim/op_origin.h"

namespace placeto {

struct OpNode {
  std::string name;  // unique; the ONNX node name (sanitised) or a synthesised one
  std::string op_type;
  double flops = 0;
  double bytes = 0;  // everything the op reads and writes, parameters included
  std::vector<int64_t> out_bytes;
  int64_t param_bytes = 0;  // parameters this op holds in device memory
  bool fallback = false;    // costed by the fallback rule (op_costs.h)
  bool is_input = false;    // a graph input: costs nothing and needs no gradient
  OpOrigin origin;          // the ONNX node or input it comes from, and its role
  // Its class for fitted profiles: cost_class() of a forward op, "<class>_grad" of a grad op,
  // "update" of an update, "" for inputs.
  std::string op_class;
  // A forward op's shapes and attributes at the exported batch (what `placeto profile` runs);
  // empty op_type for inputs and synthesised ops.
  OpSpec spec;
};

struct OpEdge {
  int src = 0;
  int dst = 0;
  int out = 0;  // output index of src
};

struct OpGraph {
  std::string name;
  std::vector<OpNode> nodes;  // in a topological order
  std::vector<OpEdge> edges;
};

// One origin per node, in node order (the order of the built graph's ops).
std::vector<OpOrigin> op_origins(const OpGraph& g);

// Compute time of one op: 0 for inputs and for ops that neither compute nor move bytes (views
// such as Reshape have no kernel), otherwise op_class_cost_us(flops, bytes, profile, class).
double op_node_cost_us(const OpNode& node, const DeviceProfile& profile);

// Builds the graph (validated by GraphBuilder; `source` names it in errors).
Graph build_graph(const OpGraph& g, const DeviceProfile& profile, const std::string& source);
// The same with given costs, one per node (measured ones: `placeto profile`).
Graph build_graph(const OpGraph& g, const std::vector<double>& cost_us, const std::string& source);

}  // namespace placeto
