// NamedArray: a dense, C-ordered, typed array as stored in a checkpoint dataset.  It is the
// torch-free currency of common/checkpoint/: the learner converts tensors to and from it.
// `bytes` hold the elements in host (little-endian) byte order, exactly as HDF5 stores them,
// so the per-dataset SHA-256 is over `bytes` and a round trip is bit for bit.
//
// Thread safety: a plain value type; no shared state.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace placeto {

enum class DType { kF32, kF64, kI64, kU8 };

size_t dtype_size(DType dtype);
// "f32", "f64", "i64", "u8" (the names used in docs/CHECKPOINT.md and `placeto ckpt-info`).
const char* dtype_name(DType dtype);

// "[3, 4]"; "[]" for a scalar.
std::string shape_string(const std::vector<int64_t>& shape);

// Product of the dimensions (1 for a scalar).  REQUIRES: every dimension >= 0.
int64_t shape_numel(const std::vector<int64_t>& shape);

struct NamedArray {
  std::vector<int64_t> shape;  // empty = scalar
  DType dtype = DType::kF32;
  std::vector<uint8_t> bytes;  // numel() * dtype_size(dtype) bytes

  int64_t numel() const { return shape_numel(shape); }

  // Builders; REQUIRES: values.size() == shape_numel(shape).
  static NamedArray from_floats(std::vector<int64_t> shape, const std::vector<float>& values);
  static NamedArray from_doubles(std::vector<int64_t> shape, const std::vector<double>& values);
  static NamedArray from_int64s(std::vector<int64_t> shape, const std::vector<int64_t>& values);
  static NamedArray from_u8s(std::vector<int64_t> shape, const std::vector<uint8_t>& values);

  // Readers; throw InputError when the dtype differs (a checkpoint holds another type).
  std::vector<float> to_floats() const;
  std::vector<double> to_doubles() const;
  std::vector<int64_t> to_int64s() const;
  std::vector<uint8_t> to_u8s() const;

  // Throws InputError naming `where` when bytes.size() does not match shape and dtype.
  void validate(const std::string& where) const;

  bool operator==(const NamedArray& o) const {
    return shape == o.shape && dtype == o.dtype && bytes == o.bytes;
  }
  bool operator!=(const NamedArray& o) const { return !(*this == o); }
};

}  // namespace placeto
