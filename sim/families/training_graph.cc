#include "sim/families/training_graph.h"

#include <algorithm>

#include "common/error.h"

namespace placeto {

int TrainingGraphBuilder::add_op(const std::string& name, const std::string& type, double flops,
                                 double bytes_moved, int64_t out_bytes,
                                 const std::vector<int>& inputs, int64_t param_bytes,
                                 bool differentiable) {
  Op op;
  op.name = name;
  op.type = type;
  op.flops = flops;
  op.bytes = bytes_moved;
  op.out_bytes = out_bytes;
  for (int i : inputs) {
    PLACETO_CHECK(i >= 0 && i < static_cast<int>(ops_.size()));
    if (std::find(op.inputs.begin(), op.inputs.end(), i) == op.inputs.end()) op.inputs.push_back(i);
  }
  op.param_bytes = param_bytes;
  op.differentiable = differentiable;
  ops_.push_back(std::move(op));
  return static_cast<int>(ops_.size()) - 1;
}

int TrainingGraphBuilder::add_variable(const std::string& name, int64_t param_bytes) {
  Op op;
  op.name = name;
  op.type = "Variable";
  op.out_bytes = param_bytes;
  op.param_bytes = param_bytes;
  op.differentiable = false;
  op.is_variable = true;
  ops_.push_back(std::move(op));
  return static_cast<int>(ops_.size()) - 1;
}

void TrainingGraphBuilder::use_variable(int op, int var) {
  PLACETO_CHECK(ops_.at(var).is_variable);
  auto& vars = ops_.at(op).vars;
  if (std::find(vars.begin(), vars.end(), var) == vars.end()) vars.push_back(var);
}

Graph TrainingGraphBuilder::build() {
  PLACETO_CHECK_GE(loss_, 0);
  const int n = static_cast<int>(ops_.size());
  // Which ops lie on a path to the loss, and which carry a gradient (they or an ancestor
  // have weights).
  std::vector<char> to_loss(n, 0), needs_grad(n, 0);
  to_loss[loss_] = 1;
  for (int v = n - 1; v >= 0; --v)
    if (to_loss[v])
      for (int u : ops_[v].inputs) to_loss[u] = 1;
  for (int v = 0; v < n; ++v) {
    const Op& op = ops_[v];
    if (!op.differentiable || !to_loss[v]) continue;
    bool g = op.param_bytes > 0 || !op.vars.empty();
    for (int u : op.inputs) g = g || needs_grad[u];
    needs_grad[v] = g;
  }
  // consumers[u]: forward ops with gradients that read u, and u's position among their
  // gradient outputs.
  std::vector<std::vector<std::pair<int, int>>> consumers(n);
  std::vector<std::vector<int>> var_users(n);
  for (int v = 0; v < n; ++v) {
    if (!needs_grad[v]) continue;
    int pos = 0;
    for (int u : ops_[v].inputs)
      if (needs_grad[u]) consumers[u].push_back({v, pos++});
    for (int var : ops_[v].vars) var_users[var].push_back(v);
  }

  GraphBuilder b(name_);
  b.set_name(name_);
  std::vector<NodeId> fwd(n), grad(n, -1);
  forward_cost_us_ = backward_cost_us_ = 0;
  for (int v = 0; v < n; ++v) {
    const Op& op = ops_[v];
    const double cost = op.is_variable ? 0.0 : cost_us(op.flops, op.bytes);
    if (!op.is_variable) forward_cost_us_ += cost;
    fwd[v] = b.add_node(op.name, op.type, cost, {op.out_bytes}, op.param_bytes);
    for (int var : op.vars) b.add_edge(fwd[var], fwd[v]);
    for (int u : op.inputs) b.add_edge(fwd[u], fwd[v]);
  }
  // Gradient ops in reverse order: outputs are the gradients of the inputs that need them,
  // then the weight gradient.  The backward pass does about twice the forward's work (the
  // input gradient and the weight gradient each cost about one forward).
  std::vector<int> weight_out(n, -1);
  for (int v = n - 1; v >= 0; --v) {
    if (!needs_grad[v]) continue;
    const Op& op = ops_[v];
    std::vector<int64_t> outs;
    for (int u : op.inputs)
      if (needs_grad[u]) outs.push_back(ops_[u].out_bytes);
    int64_t weights = op.param_bytes;
    for (int var : op.vars) weights += ops_[var].param_bytes;
    if (weights > 0) {
      weight_out[v] = static_cast<int>(outs.size());
      outs.push_back(weights);
    }
    const double cost = cost_us(2 * op.flops, 2 * op.bytes);
    backward_cost_us_ += cost;
    grad[v] = b.add_node(op.name + "/grad", op.type + "Grad", cost, outs);
    for (const auto& [c, pos] : consumers[v]) b.add_edge(grad[c], grad[v], pos);
    b.add_edge(fwd[v], grad[v]);                          // saved output
    for (int u : op.inputs) b.add_edge(fwd[u], grad[v]);  // saved inputs
    for (int var : op.vars) b.add_edge(fwd[var], grad[v]);
  }
  // Updates: SGD with momentum reads weights, gradient and momentum and writes two of them.
  auto update_cost = [&](int64_t p) { return cost_us(3.0 * p / 4, 5.0 * p); };
  for (int v = 0; v < n; ++v) {
    const Op& op = ops_[v];
    if (op.is_variable) {
      const auto& users = var_users[v];
      if (users.empty()) continue;
      NodeId gsum = -1;
      int gsum_out = 0;
      if (users.size() == 1) {
        gsum = grad[users[0]];
        gsum_out = weight_out[users[0]];
      } else {
        const double k = static_cast<double>(users.size());
        gsum =
            b.add_node(op.name + "/grad_sum", "AddN",
                       cost_us(k * op.param_bytes / 4, (k + 1) * op.param_bytes), {op.param_bytes});
        for (int u : users) b.add_edge(grad[u], gsum, weight_out[u]);
      }
      NodeId upd =
          b.add_node(op.name + "/update", "ApplyMomentum", update_cost(op.param_bytes), {});
      b.add_edge(gsum, upd, gsum_out);
      b.add_edge(fwd[v], upd);
    } else if (op.param_bytes > 0 && grad[v] >= 0) {
      NodeId upd =
          b.add_node(op.name + "/update", "ApplyMomentum", update_cost(op.param_bytes), {});
      b.add_edge(grad[v], upd, weight_out[v]);
    }
  }
  return b.build();
}

}  // namespace placeto
