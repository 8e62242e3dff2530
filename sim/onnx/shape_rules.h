// The importer's own shape propagation, for the common ops whose output shapes ONNX's shape
// inference (Debian's ONNX 1.12) leaves unknown -- typically Slice and Expand in PyTorch
// exports, whose bounds come from small integer subgraphs (Shape -> Gather -> Mul -> ...).
//
// Two pieces: `evaluate_static` folds those small integer tensors (shapes, indices, axes) to
// values at import time, and `infer_missing_shapes` fills output shapes that are still
// unknown from input shapes, attributes and folded values.  Neither fails: when a rule cannot
// apply, the output stays unknown and the importer warns.
// Thread-safe: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "sim/onnx/op_costs.h"

namespace placeto {

// The values of an integer tensor known at import time (flattened, row-major).
using StaticValue = std::optional<std::vector<int64_t>>;

// Folded values of every output of `op` (nullopt where not foldable).  `in_values[i]` is the
// folded value of input i or nullopt.  Only integer tensors of rank <= 1 are folded.
std::vector<StaticValue> evaluate_static(const OpSpec& op,
                                         const std::vector<StaticValue>& in_values);

// Fills `op.outputs[i]` that are not `known` when a rule applies.
void infer_missing_shapes(OpSpec& op, const std::vector<StaticValue>& in_values);

// Numpy-style broadcast of two shapes; nullopt when incompatible.
std::optional<std::vector<int64_t>> broadcast_shapes(const std::vector<int64_t>& a,
                                                     const std::vector<int64_t>& b);

}  // namespace placeto
