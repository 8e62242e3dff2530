#include "sim/onnx/onnx_proto_util.h"

#include <cstring>

namespace placeto {

int64_t onnx_element_bytes(int32_t data_type) {
  using T = onnx::TensorProto;
  switch (data_type) {
    case T::UINT8:
    case T::INT8:
    case T::BOOL:
      return 1;
    case T::UINT16:
    case T::INT16:
    case T::FLOAT16:
    case T::BFLOAT16:
      return 2;
    case T::INT64:
    case T::UINT64:
    case T::DOUBLE:
    case T::COMPLEX64:
      return 8;
    case T::COMPLEX128:
      return 16;
    default:
      return 4;
  }
}

TensorInfo tensor_info_of(const onnx::TypeProto& type) {
  TensorInfo t;
  if (!type.has_tensor_type()) return t;
  const auto& tt = type.tensor_type();
  t.elem_bytes = onnx_element_bytes(tt.elem_type());
  if (!tt.has_shape()) return t;
  t.known = true;
  for (const auto& d : tt.shape().dim()) {
    if (d.has_dim_value() && d.dim_value() >= 0) {
      t.shape.push_back(d.dim_value());
    } else {
      t.shape.push_back(-1);
      t.known = false;
    }
  }
  return t;
}

TensorInfo tensor_info_of(const onnx::TensorProto& tensor) {
  TensorInfo t;
  t.known = true;
  t.elem_bytes = onnx_element_bytes(tensor.data_type());
  for (int64_t d : tensor.dims()) {
    t.shape.push_back(d);
    if (d < 0) t.known = false;  // a damaged file; like an unknown dim in a TypeProto
  }
  return t;
}

StaticValue static_value_of(const onnx::TensorProto& tensor) {
  using T = onnx::TensorProto;
  // Scalars and short vectors only; checking the rank first keeps n from overflowing.
  if (tensor.dims_size() > 1) return std::nullopt;
  const int64_t n = tensor.dims_size() == 1 ? tensor.dims(0) : 1;
  if (n < 0 || n > 4096) return std::nullopt;
  std::vector<int64_t> v;
  switch (tensor.data_type()) {
    case T::INT64:
      if (tensor.int64_data_size() > 0) {
        v.assign(tensor.int64_data().begin(), tensor.int64_data().end());
      } else if (tensor.raw_data().size() == static_cast<size_t>(n) * 8 && n > 0) {
        // (n == 0: memcpy from an empty vector's null data is undefined; found by fuzzing)
        v.resize(n);
        std::memcpy(v.data(), tensor.raw_data().data(), n * 8);  // little-endian, as x86
      }
      break;
    case T::INT32:
      if (tensor.int32_data_size() > 0) {
        v.assign(tensor.int32_data().begin(), tensor.int32_data().end());
      } else if (tensor.raw_data().size() == static_cast<size_t>(n) * 4 && n > 0) {
        std::vector<int32_t> w(n);
        std::memcpy(w.data(), tensor.raw_data().data(), n * 4);
        v.assign(w.begin(), w.end());
      }
      break;
    default:
      return std::nullopt;
  }
  if (static_cast<int64_t>(v.size()) != n) return std::nullopt;
  return v;
}

OpAttributes attributes_of(const onnx::NodeProto& node) {
  OpAttributes a;
  for (const auto& attr : node.attribute()) {
    switch (attr.type()) {
      case onnx::AttributeProto::INT:
        a.ints[attr.name()] = {attr.i()};
        break;
      case onnx::AttributeProto::INTS:
        a.ints[attr.name()].assign(attr.ints().begin(), attr.ints().end());
        break;
      case onnx::AttributeProto::FLOAT:
        a.floats[attr.name()] = attr.f();
        break;
      case onnx::AttributeProto::STRING:
        a.strings[attr.name()] = attr.s();
        break;
      case onnx::AttributeProto::TENSOR:
        if (auto v = static_value_of(attr.t()); v && v->size() == 1) a.ints[attr.name()] = *v;
        break;
      default:
        break;
    }
  }
  return a;
}

}  // namespace placeto
