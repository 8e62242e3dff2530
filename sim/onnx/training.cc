#include "sim/onnx/training.h"

#include <unordered_set>

#include "common/error.h"

namespace placeto {
namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

std::string forward_op_name(const std::string& node_name) {
  for (const std::string suffix : {kGradSuffix, kUpdateSuffix})
    if (ends_with(node_name, suffix)) return node_name.substr(0, node_name.size() - suffix.size());
  return node_name;
}

OpGraph add_training_ops(const OpGraph& fwd, const TrainingOptions& opt) {
  const int n = static_cast<int>(fwd.nodes.size());
  std::vector<std::vector<int>> in_edges(n);  // forward in-edges of each node, in edge order
  for (int e = 0; e < static_cast<int>(fwd.edges.size()); ++e)
    in_edges[fwd.edges[e].dst].push_back(e);

  // requires_grad: the op holds parameters or reads an op that requires a gradient.  The
  // nodes are in topological order, so one pass suffices.
  std::vector<bool> needs(n, false);
  for (int v = 0; v < n; ++v) {
    const OpNode& node = fwd.nodes[v];
    if (node.is_input) continue;
    needs[v] = node.param_bytes > 0;
    for (int e : in_edges[v]) needs[v] = needs[v] || needs[fwd.edges[e].src];
  }

  OpGraph g = fwd;
  std::vector<int> grad(n, -1), update(n, -1);
  for (int v = n - 1; v >= 0; --v) {  // reverse topological order, as backprop runs
    if (!needs[v]) continue;
    const OpNode& f = fwd.nodes[v];
    OpNode gnode;
    gnode.name = f.name + kGradSuffix;
    gnode.op_type = f.op_type + "Grad";
    gnode.op_class = f.op_class + "_grad";
    double factor = f.param_bytes > 0 ? opt.param_grad_factor : opt.grad_factor;
    gnode.flops = factor * f.flops;
    gnode.bytes = factor * f.bytes;
    gnode.fallback = f.fallback;
    gnode.origin = f.origin;
    gnode.origin.role = OpRole::kGrad;
    for (int e : in_edges[v]) {
      const OpEdge& edge = fwd.edges[e];
      const OpNode& parent = fwd.nodes[edge.src];
      gnode.out_bytes.push_back(
          edge.out < static_cast<int>(parent.out_bytes.size()) ? parent.out_bytes[edge.out] : 0);
    }
    if (f.param_bytes > 0) gnode.out_bytes.push_back(f.param_bytes);
    grad[v] = static_cast<int>(g.nodes.size());
    g.nodes.push_back(std::move(gnode));
  }
  for (int v = 0; v < n; ++v) {
    const OpNode& f = fwd.nodes[v];
    if (grad[v] < 0 || f.param_bytes <= 0) continue;
    OpNode u;
    u.name = f.name + kUpdateSuffix;
    u.op_type = "ApplyGradient";
    u.op_class = "update";
    double params = static_cast<double>(f.param_bytes) / 4.0;
    u.flops = opt.update_flops_per_param * params;
    u.bytes = opt.update_bytes_factor * static_cast<double>(f.param_bytes);
    u.param_bytes = f.param_bytes;
    u.origin = f.origin;
    u.origin.role = OpRole::kUpdate;
    g.nodes[v].param_bytes = 0;
    update[v] = static_cast<int>(g.nodes.size());
    g.nodes.push_back(std::move(u));
  }

  // Edges in the order the backward pass consumes them.
  for (int v = n - 1; v >= 0; --v) {
    if (grad[v] < 0) continue;
    for (int e : in_edges[v]) {  // saved inputs
      const OpEdge& edge = fwd.edges[e];
      g.edges.push_back({edge.src, grad[v], edge.out});
    }
    g.edges.push_back({v, grad[v], 0});  // saved output
  }
  for (int v = n - 1; v >= 0; --v) {
    if (grad[v] < 0) continue;
    for (size_t i = 0; i < in_edges[v].size(); ++i) {  // input gradients flow to the parents
      int u = fwd.edges[in_edges[v][i]].src;
      if (grad[u] >= 0) g.edges.push_back({grad[v], grad[u], static_cast<int>(i)});
    }
    if (update[v] >= 0)
      g.edges.push_back({grad[v], update[v], static_cast<int>(in_edges[v].size())});
  }
  return g;
}

}  // namespace placeto
