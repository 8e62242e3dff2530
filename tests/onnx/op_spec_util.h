// Hand-written op shapes for tests of the cost rules (op_costs_test.cc) and of the op timer
// (tests/profiler/op_timer_test.cc).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "sim/onnx/op_costs.h"

namespace placeto {

// A tensor of known shape; `param` marks a weight.
inline TensorInfo T(std::vector<int64_t> shape, bool param = false, int64_t elem_bytes = 4) {
  TensorInfo t;
  t.known = true;
  t.shape = std::move(shape);
  t.is_param = param;
  t.elem_bytes = elem_bytes;
  return t;
}

inline OpSpec Op(std::string type, std::vector<TensorInfo> in, std::vector<TensorInfo> out,
                 std::map<std::string, std::vector<int64_t>> ints = {}) {
  OpSpec op;
  op.op_type = std::move(type);
  op.inputs = std::move(in);
  op.outputs = std::move(out);
  op.attrs.ints = std::move(ints);
  return op;
}

}  // namespace placeto
