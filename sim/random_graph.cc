#include "sim/random_graph.h"

#include <algorithm>
#include <random>
#include <string>
#include <unordered_set>

namespace placeto {

Graph make_random_graph(const RandomGraphOptions& o) {
  std::mt19937_64 rng(o.seed);
  std::uniform_real_distribution<double> cost(o.min_cost_us, o.max_cost_us);
  std::uniform_int_distribution<int64_t> bytes(o.min_bytes, o.max_bytes);
  std::uniform_int_distribution<int> outs(1, std::max(1, o.max_outputs));
  GraphBuilder b("random(seed=" + std::to_string(o.seed) + ")");
  b.set_name("random_" + std::to_string(o.num_nodes) + "_" + std::to_string(o.seed));
  std::vector<int> num_outs(o.num_nodes);
  for (int i = 0; i < o.num_nodes; ++i) {
    num_outs[i] = outs(rng);
    std::vector<int64_t> ob(num_outs[i]);
    for (auto& x : ob) x = bytes(rng);
    // Names are not in index order so that byte-order ranks differ from file order.
    b.add_node("op" + std::to_string((i * 7919) % (o.num_nodes * 10 + 7)) + "_" + std::to_string(i),
               "Random", cost(rng), std::move(ob));
  }
  const int64_t target = static_cast<int64_t>(o.edges_per_node * o.num_nodes);
  std::vector<std::pair<int, int>> edges;
  std::uniform_int_distribution<int> any(0, std::max(0, o.num_nodes - 2));
  std::uniform_int_distribution<int> span(1, std::max(1, o.max_span));
  std::unordered_set<uint64_t> seen;
  for (int64_t tries = 0; static_cast<int64_t>(edges.size()) < target && tries < 20 * target;
       ++tries) {
    int s = any(rng);
    int d = std::min(o.num_nodes - 1, s + span(rng));
    if (d == s) continue;
    uint64_t key = (static_cast<uint64_t>(s) << 32) | static_cast<uint32_t>(d);
    if (!seen.insert(key).second) continue;
    edges.emplace_back(s, d);
  }
  for (auto [s, d] : edges) {
    int out = static_cast<int>(rng() % static_cast<uint64_t>(num_outs[s] + 1));  // may be past end
    b.add_edge(s, d, out);
  }
  return b.build();
}

Placement make_random_placement(const Graph& g, int num_devices, uint64_t seed) {
  std::mt19937_64 rng(seed);
  Placement p(num_devices, g.num_nodes());
  for (auto& d : p.device) d = static_cast<int32_t>(rng() % static_cast<uint64_t>(num_devices));
  return p;
}

Graph make_random_graph(int num_nodes, uint64_t seed) {
  RandomGraphOptions o;
  o.num_nodes = num_nodes;
  o.seed = seed;
  return make_random_graph(o);
}

}  // namespace placeto
