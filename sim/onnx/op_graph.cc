#include "sim/onnx/op_graph.h"

#include "common/error.h"

namespace placeto {

std::vector<OpOrigin> op_origins(const OpGraph& g) {
  std::vector<OpOrigin> origins;
  origins.reserve(g.nodes.size());
  for (const OpNode& n : g.nodes) origins.push_back(n.origin);
  return origins;
}

double op_node_cost_us(const OpNode& node, const DeviceProfile& profile) {
  if (node.is_input || (node.flops <= 0 && node.bytes <= 0)) return 0;
  return op_class_cost_us(node.flops, node.bytes, profile, node.op_class);
}

Graph build_graph(const OpGraph& g, const DeviceProfile& profile, const std::string& source) {
  std::vector<double> cost;
  cost.reserve(g.nodes.size());
  for (const OpNode& n : g.nodes) cost.push_back(op_node_cost_us(n, profile));
  return build_graph(g, cost, source);
}

Graph build_graph(const OpGraph& g, const std::vector<double>& cost_us, const std::string& source) {
  PLACETO_CHECK_EQ(cost_us.size(), g.nodes.size());
  GraphBuilder b(source);
  b.set_name(g.name);
  for (size_t v = 0; v < g.nodes.size(); ++v) {
    const OpNode& n = g.nodes[v];
    b.add_node(n.name, n.op_type, cost_us[v], n.out_bytes, n.param_bytes);
  }
  for (const OpEdge& e : g.edges) b.add_edge(NodeId{e.src}, NodeId{e.dst}, e.out);
  return b.build();
}

}  // namespace placeto
