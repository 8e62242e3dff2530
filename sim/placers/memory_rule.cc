#include "sim/placers/memory_rule.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <tuple>

#include "common/error.h"

namespace placeto {
namespace {

// 2^50 us: every step of a placement that fits scores below it, every other placement above.
constexpr double kFeasibleCeiling = 1125899906842624.0;

// The key's fields: bit widths and grids (see the header).
constexpr int kMaxBits = 22;    // largest relative overflow, grid 2^-16, up to 64x
constexpr int kTotalBits = 22;  // total overflow / total capacity, grid 2^-14, up to 256x
constexpr int kStepBits = 17;   // step: 6 exponent bits (1 us .. 2^64 us), 11 mantissa bits
constexpr double kMaxGrid = 65536.0;
constexpr double kTotalGrid = 16384.0;

uint64_t bits_of(double x) {
  uint64_t b;
  std::memcpy(&b, &x, sizeof b);
  return b;
}

double double_of(uint64_t b) {
  double x;
  std::memcpy(&x, &b, sizeof x);
  return x;
}

// ceil(x * grid), clamped to [1, 2^bits - 1]: an overflow, however small, is never 0.
uint64_t grid_steps(double x, double grid, int bits) {
  const double top = static_cast<double>((uint64_t{1} << bits) - 1);
  const double q = std::ceil(x * grid);
  return static_cast<uint64_t>(std::clamp(q, 1.0, top));
}

// The step's exponent (from 1 us) and its 11 leading mantissa bits: monotone in the step.
uint64_t step_steps(double step_us) {
  if (!(step_us >= 1.0)) return 0;
  const uint64_t above_one = bits_of(step_us) - bits_of(1.0);
  return std::min<uint64_t>(above_one >> (52 - 11), (uint64_t{1} << kStepBits) - 1);
}

struct InfeasibleKey {
  uint64_t max, total, step;
  uint64_t packed() const {
    return (max << (kTotalBits + kStepBits)) | (total << kStepBits) | step;
  }
};

InfeasibleKey key_of(const MemoryOverflow& o, double step_us) {
  return {grid_steps(o.max_relative, kMaxGrid, kMaxBits),
          grid_steps(o.total_relative, kTotalGrid, kTotalBits), step_steps(step_us)};
}

}  // namespace

MemoryOverflow memory_overflow(const std::vector<int64_t>& peak, const std::vector<int64_t>& params,
                               const Cluster& c) {
  MemoryOverflow o;
  double capacity = 0;
  for (int d = 0; d < c.num_devices(); ++d) {
    const double cap = c.devices[d].memory_bytes;
    if (!(cap > 0)) continue;
    capacity += cap;
    const double need = static_cast<double>(peak[d] + params[d]);
    if (!(need > cap)) continue;
    o.max_relative = std::max(o.max_relative, (need - cap) / cap);
    o.total_bytes += need - cap;
  }
  if (capacity > 0) o.total_relative = o.total_bytes / capacity;
  return o;
}

bool better_under_memory_rule(const MemoryOverflow& a, double step_a, const MemoryOverflow& b,
                              double step_b) {
  if (a.fits() != b.fits()) return a.fits();
  if (a.fits()) return step_a < step_b;
  const InfeasibleKey ka = key_of(a, step_a), kb = key_of(b, step_b);
  return std::tie(ka.max, ka.total, ka.step) < std::tie(kb.max, kb.total, kb.step);
}

double memory_rule_score(const MemoryOverflow& o, double step_us) {
  if (o.fits()) return std::min(step_us, std::nextafter(kFeasibleCeiling, 0.0));
  static_assert(kMaxBits + kTotalBits + kStepBits == 61, "the key fills 61 bits");
  // 2^50 + 1 + 2^61 stays below the bits of +inf (0x7ff0...): the score is finite.
  return double_of(bits_of(kFeasibleCeiling) + 1 + key_of(o, step_us).packed());
}

bool score_improves(double score, double than) {
  if (than < kFeasibleCeiling) return score < than * (1 - 1e-12);
  return score < than;
}

}  // namespace placeto
