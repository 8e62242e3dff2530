// Builds the graph of one *training step* from a description of the forward pass: every
// differentiable op on a path to the loss gets a gradient op that reads the upstream
// gradients, the op's saved inputs and output, and the weights it used; every parameter gets
// an update op (and, for weights shared across ops such as recurrent weights, one op that sums
// their gradients first).  Op costs come from the roofline cost model (sim/cost_model.h).
// Not thread-safe; build one graph per builder.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/cost_model.h"
#include "sim/graph.h"

namespace placeto {

class TrainingGraphBuilder {
 public:
  TrainingGraphBuilder(std::string graph_name, const DeviceProfile& profile)
      : name_(std::move(graph_name)), profile_(profile) {}

  // A forward op with one output of `out_bytes`, reading the outputs of earlier ops
  // (`inputs`, duplicates ignored).  `param_bytes` are weights the op holds itself.  Ops that
  // are not `differentiable` (data readers) never get gradient ops.  Returns the op's id.
  int add_op(const std::string& name, const std::string& type, double flops, double bytes_moved,
             int64_t out_bytes, const std::vector<int>& inputs, int64_t param_bytes = 0,
             bool differentiable = true);
  // Weights used by several ops (recurrent weights shared over time steps): a variable op
  // that holds them and whose output is read by each user.
  int add_variable(const std::string& name, int64_t param_bytes);
  // `op` reads the weights of variable `var` (both ids from this builder).
  void use_variable(int op, int var);
  // The op whose output is the loss: gradients start there.
  void set_loss(int op) { loss_ = op; }

  // REQUIRES: set_loss() was called.  Node order: forward ops, gradient ops in reverse,
  // gradient sums and updates.
  Graph build();

  double forward_cost_us() const { return forward_cost_us_; }
  double backward_cost_us() const { return backward_cost_us_; }

  // The roofline cost on this builder's profile.
  double cost_us(double flops, double bytes) const {
    return roofline_cost_us(flops, bytes, profile_);
  }

 private:
  struct Op {
    std::string name, type;
    double flops = 0, bytes = 0;
    int64_t out_bytes = 0;
    std::vector<int> inputs;
    std::vector<int> vars;
    int64_t param_bytes = 0;
    bool differentiable = true;
    bool is_variable = false;
  };
  std::string name_;
  const DeviceProfile& profile_;
  std::vector<Op> ops_;
  int loss_ = -1;
  double forward_cost_us_ = 0;
  double backward_cost_us_ = 0;
};

}  // namespace placeto
