// The project's random draws: a 64-bit Mersenne Twister (its sequence is fixed by the C++
// standard) reduced by hand, never through std::uniform_*_distribution or std::shuffle, whose
// outputs differ between standard libraries.  So a seed reproduces a run on any toolchain.
// Not thread-safe: one Rng per thread.
//
// The project's one seeding scheme: a run has one 64-bit seed, and its random streams are
// drawn from engines seeded by one of these two functions of it:
//   - derive_seed(seed, stream): the seed of stream number `stream` of `seed` (splitmix64);
//     the generated families (graph i of a family, the train/test split), the search trainer's
//     jobs and the families report use it.  Chain it for nested streams.
//   - seeded_engine(seed, rank, iteration): the engine of one rank at the start of one training
//     iteration (the trainer's per-(rank, iteration) stream; checkpoints record its state).
// Both are pure functions fixed for good: changing one changes every generated family and
// every training run (tests/common/rng_test.cc pins their values).
#pragma once

#include <cstdint>
#include <random>
#include <utility>
#include <vector>

namespace placeto {

// The seed of stream `stream` of `seed`: splitmix64's output function on
// seed + golden-ratio * (stream + 1).  Distinct streams of one seed give unrelated seeds.
inline uint64_t derive_seed(uint64_t seed, uint64_t stream) {
  uint64_t z = seed + 0x9E3779B97F4A7C15ull * (stream + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// The engine of `rank` at the start of training iteration `iteration` of a run seeded with
// `seed`: a std::seed_seq over the seed's and the iteration's 32-bit halves, the rank and a
// constant (std::seed_seq's mixing is fixed by the C++ standard).
inline std::mt19937_64 seeded_engine(uint64_t seed, int rank, int64_t iteration) {
  std::seed_seq seq{static_cast<uint32_t>(seed),
                    static_cast<uint32_t>(seed >> 32),
                    static_cast<uint32_t>(rank),
                    static_cast<uint32_t>(iteration),
                    static_cast<uint32_t>(static_cast<uint64_t>(iteration) >> 32),
                    0x9e3779b9u};
  return std::mt19937_64(seq);
}

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
