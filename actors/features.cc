#include "actors/features.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace placeto {

int node_feature_width(const FeatureConfig& c, int num_devices) {
  return (c.with_memory ? 6 : 5) + (c.any_devices ? 1 : num_devices);
}

int lookahead_width_per_device(const FeatureConfig& c) {
  if (!c.lookahead) return 0;
  return kLookaheadPerDevice + (c.memory_features ? kMemoryLookaheadPerDevice : 0) +
         (c.any_devices ? kDevicePerDevice : 0);
}

int feature_width(const FeatureConfig& c, int num_devices) {
  return node_feature_width(c, num_devices) + lookahead_width_per_device(c) * num_devices;
}

namespace {

// The kDevicePerDevice columns of every device (features.h), device-major.
void device_columns(const PlacementEnv& env, std::vector<double>* out) {
  const Graph& g = env.graph();
  const Cluster& cluster = env.cluster();
  const int d = env.num_devices();
  const auto& dev = env.placement().device;
  out->assign(static_cast<size_t>(d) * kDevicePerDevice, 0.0);
  auto at = [&](int j, int k) -> double& {
    return (*out)[static_cast<size_t>(j) * kDevicePerDevice + k];
  };
  // Tensors between the current step's ops and the rest, by the device of the other end.
  const std::vector<NodeId> unit = env.current_ops();
  std::vector<char> inside(static_cast<size_t>(g.num_nodes()), 0);
  for (NodeId v : unit) inside[v] = 1;
  double total_bytes = 0;
  auto count = [&](EdgeId e, NodeId other) {
    if (inside[other]) return;
    const double w = static_cast<double>(g.edge_bytes(e)) + 1;
    at(dev[other], 0) += w;
    total_bytes += w;
  };
  for (NodeId v : unit) {
    for (int i = g.parent_begin(v); i < g.parent_end(v); ++i)
      count(g.parent_edges()[i], g.edge_src(g.parent_edges()[i]));
    for (int i = g.child_begin(v); i < g.child_end(v); ++i)
      count(g.child_edges()[i], g.edge_dst(g.child_edges()[i]));
  }
  double total_cost = 0;
  for (NodeId v = 0; v < g.num_nodes(); ++v) {
    at(dev[v], 1) += g.cost_us(v);
    total_cost += g.cost_us(v);
  }
  const double cost = std::max(1.0, g.cost_us(env.current_node()));
  double fastest = cluster.op_time_us(cost, 0);
  for (int j = 1; j < d; ++j) fastest = std::min(fastest, cluster.op_time_us(cost, j));
  const SimResult& r = env.last_sim();
  for (int j = 0; j < d; ++j) {
    if (total_bytes > 0) at(j, 0) /= total_bytes;
    if (total_cost > 0) at(j, 1) /= total_cost;
    const double t = cluster.op_time_us(cost, j);
    at(j, 2) = t > 0 ? fastest / t : 1.0;
    const double cap = cluster.devices[static_cast<size_t>(j)].memory_bytes;
    at(j, 3) = 1.0;
    if (cap > 0 && j < static_cast<int>(r.peak_mem_bytes.size())) {
      const double need = static_cast<double>(r.peak_mem_bytes[j] + r.param_bytes[j]);
      at(j, 3) = std::clamp((cap - need) / cap, -1.0, 1.0);
    }
  }
}

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
  std::vector<double> devices;  // any_devices: kDevicePerDevice per device
  if (c.any_devices) device_columns(env, &devices);
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
    if (c.any_devices) {
      const int at = kLookaheadPerDevice + (c.memory_features ? kMemoryLookaheadPerDevice : 0);
      for (int k = 0; k < kDevicePerDevice; ++k)
        f[at + k] = static_cast<float>(devices[static_cast<size_t>(j) * kDevicePerDevice + k]);
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
    if (c.any_devices) {
      row[k++] = dev[v] == dev[cur] ? 1.0f : 0.0f;
    } else {
      for (int j = 0; j < d; ++j) row[k + j] = dev[v] == j ? 1.0f : 0.0f;
      k += d;
    }
    if (c.lookahead) std::fill(row + k, row + w, 0.0f);
  }
  if (c.lookahead)
    write_lookahead(env, c, out + static_cast<size_t>(cur) * w + node_feature_width(c, d));
}

}  // namespace placeto
