// Where an op of an imported graph comes from in the user's model, so that a placement of the
// graph (or of its coarsened form) can be reported per ONNX node.  The ONNX importer fills one
// per op (sim/onnx/onnx_import.h); the coarse map file carries them (sim/coarse_map.h).
// Plain data; thread-safe to read.
#pragma once

#include <string>

namespace placeto {

enum class OpRole {
  kInput,    // a graph input of the model (an op of type Input, cost 0)
  kForward,  // the op of an ONNX node
  kGrad,     // synthesised backward op of an ONNX node (`<op>/grad`, --training)
  kUpdate,   // synthesised parameter update of an ONNX node (`<op>/update`, --training)
};

struct OpOrigin {
  OpRole role = OpRole::kForward;
  // The ONNX node's name exactly as in the file (may be empty or repeated there: `node`
  // tells them apart), or the graph input's name for kInput.
  std::string name;
  int node = -1;  // index in the model's graph.node list; -1 for a graph input
};

// "input", "forward", "grad", "update".
const char* op_role_name(OpRole role);
// The inverse; false when `name` is none of them.
bool parse_op_role(const std::string& name, OpRole* role);

}  // namespace placeto
