// The arithmetic every backend shares, so that backends agree bit for bit where they can:
// the fixed rank-order sum used by the deterministic reductions, and the host-side division
// that turns a sum into a mean.  Internal to common/comm/.
//
// Threading: pure functions.
#pragma once

#include <cstddef>

namespace placeto {
namespace comm_internal {

// out[i] = ((in[0][i] + in[1][i]) + in[2][i]) + ... over `ranks` inputs, for i < n.
// `out` may alias in[0] (but no other input).
template <typename T>
void sum_in_rank_order(const T* const* in, int ranks, size_t n, T* out) {
  for (size_t i = 0; i < n; ++i) {
    T acc = in[0][i];
    for (int r = 1; r < ranks; ++r) acc += in[r][i];
    out[i] = acc;
  }
}

// Turns a sum over `ranks` ranks into a mean.  Division (not multiplication by 1/ranks) so
// that it is exact whenever the mean is representable, and identical on every backend.
template <typename T>
void divide_by_ranks(T* data, size_t n, int ranks) {
  if (ranks == 1) return;
  const T divisor = static_cast<T>(ranks);
  for (size_t i = 0; i < n; ++i) data[i] /= divisor;
}

// The half-open element range [begin, end) of `part` when n elements are split into
// `parts` nearly equal contiguous parts (the first n % parts parts get one more).
inline size_t part_begin(size_t n, int parts, int part) {
  const size_t base = n / parts, extra = n % parts;
  const size_t p = static_cast<size_t>(part);
  return p * base + (p < extra ? p : extra);
}
inline size_t part_size(size_t n, int parts, int part) {
  return n / parts + (static_cast<size_t>(part) < n % parts ? 1 : 0);
}

}  // namespace comm_internal
}  // namespace placeto
