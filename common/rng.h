// The project's random draws: a 64-bit Mersenne Twister (its sequence is fixed by the C++
// standard) reduced by hand, never through std::uniform_*_distribution or std::shuffle, whose
// outputs differ between standard libraries.  So a seed reproduces a run on any toolchain.
// Not thread-safe: one Rng per thread.
#pragma once

#include <cstdint>
#include <random>
#include <utility>
#include <vector>

namespace placeto {

class Rng {
 public:
  explicit Rng(uint64_t seed) : engine_(seed) {}
  // Uniform in [0, n) (modulo reduction: the bias is below n / 2^64).  REQUIRES: n >= 1.
  int64_t below(int64_t n) { return static_cast<int64_t>(engine_() % static_cast<uint64_t>(n)); }
  // Uniform in [0, 1), 53 random bits.
  double uniform01() { return static_cast<double>(engine_() >> 11) * 0x1.0p-53; }
  std::mt19937_64& engine() { return engine_; }

 private:
  std::mt19937_64 engine_;
};

// Fisher-Yates with the draws above, on a raw engine (the environment's episode streams).
template <typename T>
void shuffle_in_place(std::vector<T>& v, std::mt19937_64& engine) {
  for (size_t i = v.size(); i > 1; --i) {
    const size_t j = static_cast<size_t>(engine() % static_cast<uint64_t>(i));
    std::swap(v[i - 1], v[j]);
  }
}

}  // namespace placeto
