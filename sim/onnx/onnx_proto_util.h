// Conversions from ONNX protobuf messages to the importer's plain types (op_costs.h,
// shape_rules.h).  Internal to sim/onnx/: the only header besides the .cc files that includes
// onnx.pb.h, so that nothing else depends on protobuf.
// Thread-safe: pure functions.
#pragma once

#include <onnx/onnx_pb.h>

#include "sim/onnx/op_costs.h"
#include "sim/onnx/shape_rules.h"

namespace placeto {

// Bytes per element of an ONNX TensorProto::DataType (4 when unknown or undefined).
int64_t onnx_element_bytes(int32_t data_type);

// Shape and element size of a ValueInfo; `known` only when every dim has a value >= 0.
TensorInfo tensor_info_of(const onnx::TypeProto& type);
TensorInfo tensor_info_of(const onnx::TensorProto& tensor);

// The integer values of a small (rank <= 1, <= 4096 elements) integer tensor; nullopt for
// other tensors or when the data lies outside the message (external data).
StaticValue static_value_of(const onnx::TensorProto& tensor);

// INT, INTS, FLOAT and STRING attributes; a TENSOR attribute "value" of integer type (as in
// ConstantOfShape) becomes ints["value"].
OpAttributes attributes_of(const onnx::NodeProto& node);

}  // namespace placeto
