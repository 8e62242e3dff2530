#include "actors/features.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace placeto {

int node_feature_width(const FeatureConfig& c, int num_devices) {
  return (c.with_memory ? 6 : 5) + num_devices;
}

int lookahead_width_per_device(const FeatureConfig& c) {
  if (!c.lookahead) return 0;
  return kLookaheadPerDevice + (c.memory_features ? kMemoryLookaheadPerDevice : 0);
}

int feature_width(const FeatureConfig& c, int num_devices) {
  return node_feature_width(c, num_devices) + lookahead_width_per_device(c) * num_devices;
}

namespace {

void write_lookahead(const PlacementEnv& env, const FeatureConfig& c, float* out) {
  const int d = env.num_devices();
  const int per_device = lookahead_width_per_device(c);
  std::vector<double> what_if;
  std::vector<WhatIfMemory> memory;
  env.what_if_devices(&what_if, c.memory_features ? &memory : nullptr);
  const double now = env.objective_us();
  const double best = env.best_objective_us();
  double lowest = what_if[0], spread = 0;
  for (double r : what_if) {
    lowest = std::min(lowest, r);
    spread = std::max(spread, std::fabs(r - now));
  }
  const int32_t on = env.placement().device[env.current_node()];
  for (int j = 0; j < d; ++j) {
    float* f = out + static_cast<size_t>(j) * per_device;
    const double r = what_if[static_cast<size_t>(j)];
    f[0] = now > 0 ? static_cast<float>(10 * (r - now) / now) : 0.0f;
    f[1] = now > 0 ? static_cast<float>(10 * (r - best) / now) : 0.0f;
    f[2] = spread > 0 ? static_cast<float>((r - now) / spread) : 0.0f;
    f[3] = r == lowest ? 1.0f : 0.0f;
    f[4] = on == j ? 1.0f : 0.0f;
    if (c.memory_features) {
      f[5] = static_cast<float>(memory[static_cast<size_t>(j)].headroom);
      f[6] = static_cast<float>(memory[static_cast<size_t>(j)].overflow_change);
    }
  }
}

}  // namespace

void build_features(const PlacementEnv& env, const FeatureConfig& c, float* out) {
  const Graph& g = env.graph();
  const int n = g.num_nodes();
  const int d = env.num_devices();
  const int w = feature_width(c, d);
  const NodeId cur = env.current_node();
  const auto& start = env.start_us();
  const auto& visited = env.visited();
  const auto& dev = env.placement().device;
  double max_cost = 0, max_bytes = 0, max_visit = 0, max_dt = 0, max_mem = 0;
  const double t0 = start[cur];
  for (NodeId v = 0; v < n; ++v) {
    max_cost = std::max(max_cost, g.cost_us(v));
    max_bytes = std::max(max_bytes, static_cast<double>(g.total_out_bytes(v)));
    max_visit = std::max(max_visit, static_cast<double>(visited[v]));
    max_dt = std::max(max_dt, std::fabs(start[v] - t0));
    max_mem = std::max(max_mem, static_cast<double>(g.total_out_bytes(v) + g.param_bytes(v)));
  }
  auto scale = [](double x, double m) { return m > 0 ? static_cast<float>(x / m) : 0.0f; };
  for (NodeId v = 0; v < n; ++v) {
    float* row = out + static_cast<size_t>(v) * w;
    int k = 0;
    row[k++] = scale(g.cost_us(v), max_cost);
    row[k++] = scale(static_cast<double>(g.total_out_bytes(v)), max_bytes);
    row[k++] = scale(visited[v], max_visit);
    row[k++] = v == cur ? 1.0f : 0.0f;
    row[k++] = scale(start[v] - t0, max_dt);
    if (c.with_memory)
      row[k++] = scale(static_cast<double>(g.total_out_bytes(v) + g.param_bytes(v)), max_mem);
    for (int j = 0; j < d; ++j) row[k + j] = dev[v] == j ? 1.0f : 0.0f;
    k += d;
    if (c.lookahead) std::fill(row + k, row + w, 0.0f);
  }
  if (c.lookahead)
    write_lookahead(env, c, out + static_cast<size_t>(cur) * w + node_feature_width(c, d));
}

}  // namespace placeto
