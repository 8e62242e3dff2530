#include "tests/placers/random_dag.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <set>

namespace placeto {
namespace testing {

Graph random_layered_dag(const RandomDagOptions& o, uint64_t seed, const std::string& name) {
  std::mt19937_64 rng(seed);
  auto uniform = [&] { return static_cast<double>(rng() >> 11) * 0x1.0p-53; };
  auto log_uniform = [&](double lo, double hi) {
    return std::exp(std::log(lo) + uniform() * (std::log(hi) - std::log(lo)));
  };
  auto pick = [&](int lo, int hi) { return lo + static_cast<int>(rng() % (hi - lo + 1)); };
  GraphBuilder b(name);
  b.set_name(name);
  const int width = std::max(1, o.width);
  for (int i = 0; i < o.num_ops; ++i) {
    const int64_t out = static_cast<int64_t>(log_uniform(o.min_out_bytes, o.max_out_bytes));
    const int64_t params = uniform() < o.param_fraction ? 4 * out : 0;
    b.add_node("op_" + std::to_string(i), "Op",
               std::round(log_uniform(o.min_cost_us, o.max_cost_us)), {out}, params);
    const int layer = i / width;
    if (layer == 0) continue;
    std::set<int> parents;
    const int k = pick(1, std::max(1, o.max_parents));
    for (int j = 0; j < k; ++j) {
      const int from_layer = uniform() < 0.25 ? pick(0, layer - 1) : layer - 1;
      parents.insert(from_layer * width + pick(0, width - 1));
    }
    for (int p : parents) b.add_edge(p, i);
  }
  return b.build();
}

}  // namespace testing
}  // namespace placeto
