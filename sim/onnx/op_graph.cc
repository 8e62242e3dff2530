#include "sim/onnx/op_graph.h"

namespace placeto {

std::vector<OpOrigin> op_origins(const OpGraph& g) {
  std::vector<OpOrigin> origins;
  origins.reserve(g.nodes.size());
  for (const OpNode& n : g.nodes) origins.push_back(n.origin);
  return origins;
}

double op_node_cost_us(const OpNode& node, const DeviceProfile& profile) {
  if (node.is_input || (node.flops <= 0 && node.bytes <= 0)) return 0;
  return roofline_cost_us(node.flops, node.bytes, profile);
}

Graph build_graph(const OpGraph& g, const DeviceProfile& profile, const std::string& source) {
  GraphBuilder b(source);
  b.set_name(g.name);
  for (const OpNode& n : g.nodes)
    b.add_node(n.name, n.op_type, op_node_cost_us(n, profile), n.out_bytes, n.param_bytes);
  for (const OpEdge& e : g.edges) b.add_edge(NodeId{e.src}, NodeId{e.dst}, e.out);
  return b.build();
}

}  // namespace placeto
