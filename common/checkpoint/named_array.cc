#include "common/checkpoint/named_array.h"

#include <cstring>

#include "common/error.h"

namespace placeto {
namespace {

// The format stores little-endian data and `bytes` is a memcpy of host values.
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "checkpoints assume a little-endian host (see docs/CHECKPOINT.md)");

template <typename T>
NamedArray from_values(std::vector<int64_t> shape, DType dtype, const std::vector<T>& values) {
  PLACETO_CHECK_EQ(static_cast<int64_t>(values.size()), shape_numel(shape));
  NamedArray a;
  a.shape = std::move(shape);
  a.dtype = dtype;
  a.bytes.resize(values.size() * sizeof(T));
  if (!values.empty()) std::memcpy(a.bytes.data(), values.data(), a.bytes.size());
  return a;
}

template <typename T>
std::vector<T> to_values(const NamedArray& a, DType dtype) {
  if (a.dtype != dtype)
    throw InputError(std::string("array has dtype ") + dtype_name(a.dtype) + ", expected " +
                     dtype_name(dtype));
  a.validate("array");
  std::vector<T> out(a.bytes.size() / sizeof(T));
  if (!out.empty()) std::memcpy(out.data(), a.bytes.data(), a.bytes.size());
  return out;
}

}  // namespace

size_t dtype_size(DType dtype) {
  switch (dtype) {
    case DType::kF32:
      return 4;
    case DType::kF64:
    case DType::kI64:
      return 8;
    case DType::kU8:
      return 1;
  }
  PLACETO_CHECK(false);
  return 0;
}

const char* dtype_name(DType dtype) {
  switch (dtype) {
    case DType::kF32:
      return "f32";
    case DType::kF64:
      return "f64";
    case DType::kI64:
      return "i64";
    case DType::kU8:
      return "u8";
  }
  return "?";
}

std::string shape_string(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

int64_t shape_numel(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    PLACETO_CHECK_GE(d, 0);
    n *= d;
  }
  return n;
}

NamedArray NamedArray::from_floats(std::vector<int64_t> shape, const std::vector<float>& values) {
  return from_values(std::move(shape), DType::kF32, values);
}
NamedArray NamedArray::from_doubles(std::vector<int64_t> shape, const std::vector<double>& values) {
  return from_values(std::move(shape), DType::kF64, values);
}
NamedArray NamedArray::from_int64s(std::vector<int64_t> shape, const std::vector<int64_t>& values) {
  return from_values(std::move(shape), DType::kI64, values);
}
NamedArray NamedArray::from_u8s(std::vector<int64_t> shape, const std::vector<uint8_t>& values) {
  return from_values(std::move(shape), DType::kU8, values);
}

std::vector<float> NamedArray::to_floats() const { return to_values<float>(*this, DType::kF32); }
std::vector<double> NamedArray::to_doubles() const { return to_values<double>(*this, DType::kF64); }
std::vector<int64_t> NamedArray::to_int64s() const {
  return to_values<int64_t>(*this, DType::kI64);
}
std::vector<uint8_t> NamedArray::to_u8s() const { return to_values<uint8_t>(*this, DType::kU8); }

void NamedArray::validate(const std::string& where) const {
  for (int64_t d : shape)
    if (d < 0) throw InputError(where + ": negative dimension in shape " + shape_string(shape));
  const uint64_t expected = static_cast<uint64_t>(numel()) * dtype_size(dtype);
  if (bytes.size() != expected)
    throw InputError(where + ": " + std::to_string(bytes.size()) + " bytes do not fit shape " +
                     shape_string(shape) + " of " + dtype_name(dtype) + " (expected " +
                     std::to_string(expected) + ")");
}

}  // namespace placeto
