#include "sim/placers/schedule_model.h"

#include <algorithm>

#include "common/error.h"

namespace placeto {

double Timeline::find_slot(double t, double len) const {
  auto it =
      std::upper_bound(busy_.begin(), busy_.end(), t,
                       [](double x, const std::pair<double, double>& b) { return x < b.second; });
  double candidate = t;
  for (; it != busy_.end(); ++it) {
    if (candidate + len <= it->first) return candidate;
    candidate = std::max(candidate, it->second);
  }
  return candidate;
}

void Timeline::book(double start, double len) {
  if (len <= 0) return;
  auto it = std::lower_bound(busy_.begin(), busy_.end(), std::make_pair(start, start + len));
  busy_.insert(it, {start, start + len});
}

ScheduleModel::ScheduleModel(const Graph& g, const Cluster& c, bool insertion)
    : g_(g),
      c_(c),
      insertion_(insertion),
      placement_(c.num_devices(), g.num_nodes(), -1),
      start_(g.num_nodes(), 0),
      finish_(g.num_nodes(), 0),
      compute_(c.num_devices()),
      bus_(c.num_devices()),
      last_op_(c.num_devices(), -1),
      group_of_edge_(g.num_edges(), -1) {
  int32_t groups = 0;
  const auto& ce = g.child_edges();
  for (NodeId v = 0; v < g.num_nodes(); ++v) {
    // Out-degrees are small; a linear search over the earlier edges of v is cheapest.
    for (int i = g.child_begin(v); i < g.child_end(v); ++i) {
      const EdgeId e = ce[i];
      for (int j = g.child_begin(v); j < i; ++j)
        if (g.edge_out(ce[j]) == g.edge_out(e)) {
          group_of_edge_[e] = group_of_edge_[ce[j]];
          break;
        }
      if (group_of_edge_[e] < 0) group_of_edge_[e] = groups++;
    }
  }
  arrival_.assign(groups, -1.0);
}

double ScheduleModel::data_ready(NodeId v, int d, bool commit) {
  double ready = c_.compat.init_offset_us;
  scratch_.clear();
  const auto& pe = g_.parent_edges();
  for (int i = g_.parent_begin(v); i < g_.parent_end(v); ++i) {
    const EdgeId e = pe[i];
    const NodeId u = g_.edge_src(e);
    const int s = placement_.device[u];
    PLACETO_CHECK_GE(s, 0);
    if (s == d) {
      ready = std::max(ready, finish_[u]);
      continue;
    }
    const int32_t grp = group_of_edge_[e];
    if (arrival_[grp] >= 0) {
      ready = std::max(ready, arrival_[grp]);
      continue;
    }
    const double dur = c_.transfer_time_us(g_.edge_bytes(e), s, d);
    const double len = dur + c_.transfer_gap_us();
    double t = finish_[u];
    // Find a gap on the bus that also misses this op's other tentative transfers.
    for (bool moved = true; moved;) {
      t = bus_[s].find_slot(t, len);
      moved = false;
      for (const Tentative& x : scratch_)
        if (x.bus == s && t < x.end && x.start < t + len) {
          t = x.end;
          moved = true;
        }
    }
    if (commit) {
      bus_[s].book(t, len);
      arrival_[grp] = t + dur;
    } else {
      scratch_.push_back({s, t, t + len});
    }
    ready = std::max(ready, t + dur);
  }
  return ready;
}

double ScheduleModel::earliest_start_us(NodeId v, int d) {
  const double ready = data_ready(v, d, false);
  if (!insertion_) return std::max(ready, compute_[d].end());
  const double c = g_.cost_us(v);
  return compute_[d].find_slot(ready, c_.op_time_us(c, d) + c_.op_gap_us(c));
}

void ScheduleModel::assign(NodeId v, int d) {
  PLACETO_CHECK(!assigned(v));
  const double ready = data_ready(v, d, true);
  const double c = g_.cost_us(v);
  const double len = c_.op_time_us(c, d) + c_.op_gap_us(c);
  const double start =
      insertion_ ? compute_[d].find_slot(ready, len) : std::max(ready, compute_[d].end());
  compute_[d].book(start, len);
  placement_.device[v] = d;
  start_[v] = start;
  finish_[v] = start + c_.op_time_us(c, d);
  last_op_[d] = v;
}

double mean_transfer_us(const Graph& g, const Cluster& c, EdgeId e) {
  const int num_dev = c.num_devices();
  if (num_dev < 2) return 0;
  double sum = 0;
  for (int s = 0; s < num_dev; ++s)
    for (int d = 0; d < num_dev; ++d)
      if (s != d) sum += c.transfer_time_us(g.edge_bytes(e), s, d);
  return sum / (num_dev * (num_dev - 1));
}

std::vector<double> upward_rank(const Graph& g, const Cluster& c) {
  const int n = g.num_nodes();
  const int num_dev = c.num_devices();
  std::vector<double> rank(n, 0);
  const auto& order = g.topo_order();
  const auto& ce = g.child_edges();
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const NodeId v = *it;
    double w = 0;
    for (int d = 0; d < num_dev; ++d) w += c.op_time_us(g.cost_us(v), d);
    w = w / num_dev + c.op_gap_us(g.cost_us(v));
    double tail = 0;
    for (int i = g.child_begin(v); i < g.child_end(v); ++i) {
      const EdgeId e = ce[i];
      const double comm = num_dev > 1 ? mean_transfer_us(g, c, e) + c.transfer_gap_us() : 0;
      tail = std::max(tail, comm + rank[g.edge_dst(e)]);
    }
    rank[v] = w + tail;
  }
  return rank;
}

}  // namespace placeto
