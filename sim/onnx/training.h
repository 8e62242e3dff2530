// Synthesises the backward pass and the parameter updates of one training step from a
// forward graph, so that an imported inference model can be placed as a training job.
//
// For every forward op `v` that needs a gradient (it holds parameters, or one of its inputs
// does, transitively) the result has an op `<v>/grad`; for every op with parameters also an
// op `<v>/update`.  Names map back to the forward op with forward_op_name().
//  * `<v>/grad` reads v's saved inputs (an edge from each forward parent) and v's output (an
//    edge from v), and the gradient of v's output from `<c>/grad` of each child c: activation
//    gradients flow in reverse.  Its outputs are the gradients of v's inputs, one per forward
//    in-edge of v in edge order, then (with parameters) the weight gradient.
//  * Cost: `param_grad_factor` (2x) the forward FLOPs and bytes for ops with parameters
//    (gradients of both the input and the weights), `grad_factor` (1x) otherwise.
//  * `<v>/update` applies SGD with momentum: it reads the weight gradient from `<v>/grad` and
//    holds the parameters (param_bytes moves from v to it, since the weights live where they
//    are updated); `update_flops_per_param` FLOPs and `update_bytes_factor` x param_bytes
//    of traffic (read w, g, m; write w, m).
// Each synthesised op carries its forward op's origin (sim/op_origin.h) with the role grad or
// update, so placements map back to ONNX nodes without parsing names (an ONNX node may itself
// be named "x/grad").
// Thread-safe: a pure function.
#pragma once

#include <string>

#include "sim/onnx/op_graph.h"

namespace placeto {

inline constexpr const char* kGradSuffix = "/grad";
inline constexpr const char* kUpdateSuffix = "/update";

struct TrainingOptions {
  double param_grad_factor = 2.0;
  double grad_factor = 1.0;
  double update_flops_per_param = 4.0;  // with 4-byte parameters
  double update_bytes_factor = 5.0;
};

OpGraph add_training_ops(const OpGraph& forward, const TrainingOptions& options = {});

// "conv1/grad" -> "conv1", "conv1/update" -> "conv1", anything else unchanged.
std::string forward_op_name(const std::string& node_name);

}  // namespace placeto
