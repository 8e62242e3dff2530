// The per-family graph generators behind generate_graph() (sim/families/family.h).  Internal
// to sim/families.  Each call builds one graph from its own FamilyRng; a FamilyRng is not
// thread-safe.
#pragma once

#include <cstdint>
#include <random>
#include <string>

#include "sim/families/family.h"
#include "sim/graph.h"

namespace placeto {

// The generators' random choices: a 64-bit Mersenne Twister with explicit seeds, reduced by
// hand rather than with std::uniform_int_distribution, whose output differs between
// standard libraries.
class FamilyRng {
 public:
  explicit FamilyRng(uint64_t seed) : engine_(seed) {}
  // Uniform in [0, n); n >= 1.
  int below(int n) { return static_cast<int>(engine_() % static_cast<uint64_t>(n)); }

 private:
  std::mt19937_64 engine_;
};

// REQUIRES: `spec` resolved (resolve_family_spec).
Graph build_cifar10_graph(const FamilySpec& spec, FamilyRng& rng, const std::string& name);
Graph build_ptb_graph(const FamilySpec& spec, FamilyRng& rng, const std::string& name);
Graph build_nmt_graph(const FamilySpec& spec, FamilyRng& rng, const std::string& name);

}  // namespace placeto
