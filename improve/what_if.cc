#include "improve/what_if.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "sim/placers/memory.h"

namespace placeto {

const char* const WhatIf::kFeatureNames[WhatIf::kNumFeatures] = {
    "op_time_here",
    "op_time_there",
    "slack",
    "critical",
    "start",
    "wait_here",
    "start_gain",
    "queue_there",
    "transfers_removed",
    "transfers_added",
    "transfers_net",
    "neighbours_there",
    "neighbours_here",
    "load_there",
    "load_here",
    "max_load_change",
    "memory_free_there",
    "over_memory_here",
    "inverse_devices",
    "log_speed_ratio",
    "late_parent_there",
    "early_child_there",
    "output_slack",
    "transfers_attached",
    "output_wait",
    "bus_load_here",
    "bus_load_there",
    "headroom_here",
    "headroom_there_after",
    "overflow_change",
    "op_bytes_there",
};

WhatIf::WhatIf(const Graph& graph, const Cluster& cluster)
    : g_(graph), c_(cluster), n_(graph.num_nodes()), num_dev_(cluster.num_devices()) {
  slack_.resize(n_);
  latest_end_.resize(n_);
  by_start_.resize(n_);
  next_on_device_.resize(n_);
  load_.resize(num_dev_);
  dev_end_.resize(num_dev_);
  bus_load_.resize(num_dev_);
  near_bytes_.resize(num_dev_);
  near_count_.resize(num_dev_);
  ready_.resize(num_dev_);
}

void WhatIf::compute(const Simulator& sim, const Placement& p, std::vector<float>* features,
                     std::vector<Move>* moves) {
  const std::vector<double>& start = sim.start_us();
  const std::vector<double>& end = sim.end_us();
  const SimResult& r = sim.last_result();
  const double makespan = std::max(r.runtime_us, 1e-9);
  const double inv_m = 1.0 / makespan;
  const int32_t* dev = p.device.data();
  const auto& ce = g_.child_edges();
  const auto& pe = g_.parent_edges();
  const auto op_time = [&](NodeId v, int d) { return c_.op_time_us(g_.cost_us(v), d); };

  // Per-device load and the end of its last op.
  std::fill(load_.begin(), load_.end(), 0.0);
  std::fill(dev_end_.begin(), dev_end_.end(), 0.0);
  for (NodeId v = 0; v < n_; ++v) {
    load_[dev[v]] += op_time(v, dev[v]);
    dev_end_[dev[v]] = std::max(dev_end_[dev[v]], end[v]);
  }
  // Per device: how long its outgoing transfers occupy its bus.
  std::fill(bus_load_.begin(), bus_load_.end(), 0.0);
  for (EdgeId e = 0; e < g_.num_edges(); ++e) {
    const int a = dev[g_.edge_src(e)], b = dev[g_.edge_dst(e)];
    if (a != b) bus_load_[a] += c_.transfer_busy_us(g_.edge_bytes(e), a, b);
  }
  double max_load = 0;
  for (double l : load_) max_load = std::max(max_load, l);

  // Backward pass in decreasing start order: the latest end of each op that delays neither a
  // child (through its transfer) nor the next op on its device.
  const auto& topo = g_.topo_order();
  for (int i = 0; i < n_; ++i) by_start_[i] = topo[i];
  std::stable_sort(by_start_.begin(), by_start_.end(),
                   [&](NodeId a, NodeId b) { return start[a] < start[b]; });
  std::vector<NodeId> last_seen(num_dev_, -1);
  for (NodeId v : by_start_) {
    next_on_device_[v] = -1;
    if (last_seen[dev[v]] >= 0) next_on_device_[last_seen[dev[v]]] = v;
    last_seen[dev[v]] = v;
  }
  for (int i = n_ - 1; i >= 0; --i) {
    const NodeId v = by_start_[i];
    double latest = makespan - c_.op_gap_us(g_.cost_us(v));  // the step ends after the gap
    for (int k = g_.child_begin(v); k < g_.child_begin(v) + g_.out_degree(v); ++k) {
      const EdgeId e = ce[k];
      const NodeId w = g_.edge_dst(e);
      const double w_latest_start = latest_end_[w] - op_time(w, dev[w]);
      // On the same device the op's gap comes first; on another, the transfer.
      const double delay = dev[w] == dev[v] ? c_.op_gap_us(g_.cost_us(v))
                                            : c_.transfer_time_us(g_.edge_bytes(e), dev[v], dev[w]);
      latest = std::min(latest, w_latest_start - delay);
    }
    const NodeId u = next_on_device_[v];
    if (u >= 0)
      latest = std::min(latest, latest_end_[u] - op_time(u, dev[u]) - c_.op_gap_us(g_.cost_us(v)));
    latest_end_[v] = std::max(latest, end[v]);
    slack_[v] = latest_end_[v] - end[v];
  }

  const int per_op = num_dev_ - 1;
  features->assign(static_cast<size_t>(n_) * per_op * kNumFeatures, 0.0f);
  moves->resize(static_cast<size_t>(n_) * per_op);
  const float inv_dev = 1.0f / static_cast<float>(num_dev_);
  size_t row = 0;
  for (NodeId v = 0; v < n_; ++v) {
    const int here = dev[v];
    std::fill(near_bytes_.begin(), near_bytes_.end(), 0.0);
    std::fill(near_count_.begin(), near_count_.end(), 0);
    std::fill(ready_.begin(), ready_.end(), c_.compat.init_offset_us);
    double attached = 0;
    NodeId late_parent = -1, early_child = -1;
    double late_arrival = -std::numeric_limits<double>::infinity();
    double early_start = std::numeric_limits<double>::infinity();
    for (int k = g_.parent_begin(v); k < g_.parent_begin(v) + g_.in_degree(v); ++k) {
      const EdgeId e = pe[k];
      const NodeId u = g_.edge_src(e);
      const int64_t bytes = g_.edge_bytes(e);
      near_bytes_[dev[u]] += static_cast<double>(bytes);
      ++near_count_[dev[u]];
      for (int d = 0; d < num_dev_; ++d)
        ready_[d] = std::max(ready_[d], end[u] + c_.transfer_time_us(bytes, dev[u], d));
      const double arrival = end[u] + c_.transfer_time_us(bytes, dev[u], here);
      if (arrival > late_arrival) late_arrival = arrival, late_parent = u;
      if (dev[u] != here) attached += c_.transfer_busy_us(bytes, dev[u], here);
    }
    double out_slack = makespan - end[v];
    double out_wait = 0;  // the longest a remote child waited for v's output beyond its transfer
    for (int k = g_.child_begin(v); k < g_.child_begin(v) + g_.out_degree(v); ++k) {
      const EdgeId e = ce[k];
      const NodeId w = g_.edge_dst(e);
      const int64_t bytes = g_.edge_bytes(e);
      near_bytes_[dev[w]] += static_cast<double>(bytes);
      ++near_count_[dev[w]];
      if (start[w] < early_start) early_start = start[w], early_child = w;
      out_slack = std::min(out_slack, start[w] - end[v]);
      if (dev[w] != here) {
        attached += c_.transfer_busy_us(bytes, here, dev[w]);
        out_wait = std::max(out_wait, start[w] - end[v] - c_.transfer_time_us(bytes, here, dev[w]));
      }
    }
    const int degree = std::max(1, g_.in_degree(v) + g_.out_degree(v));
    const double t_here = op_time(v, here);
    const double cap_here = c_.devices[here].memory_bytes;
    const bool over_here = cap_here > 0 && r.over_capacity[here];
    const double foot = static_cast<double>(op_footprint_bytes(g_, v));
    const double need_here = static_cast<double>(r.peak_mem_bytes[here] + r.param_bytes[here]);
    // Relative overflow of a device with capacity `cap` at `need` bytes (0 when uncapped).
    const auto over = [](double need, double cap) {
      return cap > 0 ? std::max(0.0, need - cap) / cap : 0.0;
    };
    for (int d = 0; d < num_dev_; ++d) {
      if (d == here) continue;
      float* f = features->data() + row * kNumFeatures;
      (*moves)[row] = Move{v, static_cast<int32_t>(d)};
      ++row;
      const double t_there = op_time(v, d);
      // A transfer occupies its bus for bytes / bandwidth plus a fixed gap: with small
      // tensors the gaps are most of the cost.
      const double gap = c_.transfer_gap_us();
      const double removed =
          near_count_[d] > 0 ? c_.transfer_time_us(static_cast<int64_t>(near_bytes_[d]), here, d) +
                                   gap * near_count_[d]
                             : 0.0;
      const double added =
          near_count_[here] > 0
              ? c_.transfer_time_us(static_cast<int64_t>(near_bytes_[here]), here, d) +
                    gap * near_count_[here]
              : 0.0;
      double others_max = 0;
      for (int k = 0; k < num_dev_; ++k)
        if (k != d && k != here) others_max = std::max(others_max, load_[k]);
      const double after_max = std::max({others_max, load_[d] + t_there, load_[here] - t_here});
      const double cap = c_.devices[d].memory_bytes;
      double free_there = 1.0;
      if (cap > 0)
        free_there = (cap - static_cast<double>(r.peak_mem_bytes[d] + r.param_bytes[d] +
                                                g_.param_bytes(v))) /
                     cap;
      f[0] = static_cast<float>(t_here * inv_m);
      f[1] = static_cast<float>(t_there * inv_m);
      f[2] = static_cast<float>(std::min(1.0, slack_[v] * inv_m));
      f[3] = slack_[v] <= 1e-3 * makespan ? 1.0f : 0.0f;
      f[4] = static_cast<float>(start[v] * inv_m);
      f[5] = static_cast<float>(std::clamp((start[v] - ready_[here]) * inv_m, 0.0, 1.0));
      f[6] = static_cast<float>(std::clamp((start[v] - ready_[d]) * inv_m, -1.0, 1.0));
      f[7] = static_cast<float>(std::clamp((dev_end_[d] - ready_[d]) * inv_m, -1.0, 1.0));
      f[8] = static_cast<float>(std::min(1.0, removed * inv_m));
      f[9] = static_cast<float>(std::min(1.0, added * inv_m));
      f[10] = static_cast<float>(std::clamp((added - removed) * inv_m, -1.0, 1.0));
      f[11] = static_cast<float>(near_count_[d]) / static_cast<float>(degree);
      f[12] = static_cast<float>(near_count_[here]) / static_cast<float>(degree);
      f[13] = static_cast<float>(load_[d] * inv_m);
      f[14] = static_cast<float>(load_[here] * inv_m);
      f[15] = static_cast<float>(max_load > 0 ? after_max / max_load - 1.0 : 0.0);
      f[16] = static_cast<float>(std::clamp(free_there, -1.0, 1.0));
      f[17] = over_here ? 1.0f : 0.0f;
      f[18] = inv_dev;
      f[19] = static_cast<float>(std::log2(c_.devices[d].speed / c_.devices[here].speed));
      if (c_.mode == SimMode::kCompatible) f[19] = 0.0f;
      f[20] = late_parent >= 0 && dev[late_parent] == d ? 1.0f : 0.0f;
      f[21] = early_child >= 0 && dev[early_child] == d ? 1.0f : 0.0f;
      f[22] = static_cast<float>(std::clamp(out_slack * inv_m, 0.0, 1.0));
      f[23] = static_cast<float>(std::min(1.0, attached * inv_m));
      f[24] = static_cast<float>(std::clamp(out_wait * inv_m, 0.0, 1.0));
      f[25] = static_cast<float>(std::min(1.0, bus_load_[here] * inv_m));
      f[26] = static_cast<float>(std::min(1.0, bus_load_[d] * inv_m));
      const double need_there = static_cast<double>(r.peak_mem_bytes[d] + r.param_bytes[d]);
      f[27] = cap_here > 0
                  ? static_cast<float>(std::clamp((cap_here - need_here) / cap_here, -1.0, 1.0))
                  : 1.0f;
      f[28] = cap > 0 ? static_cast<float>(std::clamp((cap - need_there - foot) / cap, -1.0, 1.0))
                      : 1.0f;
      f[29] = static_cast<float>(std::clamp(over(need_there + foot, cap) - over(need_there, cap) +
                                                over(need_here - foot, cap_here) -
                                                over(need_here, cap_here),
                                            -1.0, 1.0));
      f[30] = cap > 0 ? static_cast<float>(std::min(1.0, foot / cap)) : 0.0f;
    }
  }
}

}  // namespace placeto
