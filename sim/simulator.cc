#include "sim/simulator.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "common/error.h"
#include "sim/hetero_simulator.h"

namespace placeto {

namespace {
constexpr double kIdle = std::numeric_limits<double>::infinity();

// Non-negative doubles order like their bit patterns read as unsigned integers.
inline uint64_t time_bits(double t) {
  uint64_t b;
  std::memcpy(&b, &t, sizeof b);
  return b;
}
inline double bits_time(uint64_t b) {
  double t;
  std::memcpy(&t, &b, sizeof t);
  return t;
}
}  // namespace

int64_t SimResult::max_peak_mem_bytes() const {
  int64_t m = 0;
  for (int64_t x : peak_mem_bytes) m = std::max(m, x);
  return m;
}

Simulator::~Simulator() = default;

const std::vector<double>& Simulator::start_us() const {
  return hetero_ ? hetero_->start_us() : start_;
}
const std::vector<double>& Simulator::end_us() const { return hetero_ ? hetero_->end_us() : end_; }
const SimResult& Simulator::last_result() const {
  return hetero_ ? hetero_->last_result() : result_;
}

Simulator::Simulator(const Graph& graph, const Cluster& cluster)
    : graph_(graph), cluster_(cluster) {
  if (cluster.mode != SimMode::kCompatible) {
    hetero_ = std::make_unique<HeteroSimulator>(graph, cluster);
    return;
  }
  const int n = graph.num_nodes();
  const int m = graph.num_edges();
  const int d = cluster.num_devices();
  PLACETO_CHECK_GE(d, 1);
  // Children of each node in byte order of their names (the release order).
  node_of_rank_.assign(n, 0);
  for (NodeId v = 0; v < n; ++v) node_of_rank_[graph.name_rank(v)] = v;
  rchild_offset_.assign(n + 1, 0);
  rchild_.resize(m);
  rchild_out_.resize(m);
  std::vector<EdgeId> tmp;
  for (NodeId v = 0; v < n; ++v) {
    tmp.assign(graph.child_edges().begin() + graph.child_begin(v),
               graph.child_edges().begin() + graph.child_end(v));
    std::sort(tmp.begin(), tmp.end(), [&](EdgeId a, EdgeId b) {
      return graph.name_rank(graph.edge_dst(a)) < graph.name_rank(graph.edge_dst(b));
    });
    rchild_offset_[v + 1] = rchild_offset_[v] + static_cast<int32_t>(tmp.size());
    for (size_t i = 0; i < tmp.size(); ++i) {
      rchild_[rchild_offset_[v] + i] = graph.edge_dst(tmp[i]);
      rchild_out_[rchild_offset_[v] + i] = graph.edge_out(tmp[i]);
    }
  }
  releases_.reserve(n + m + 16);
  tree_leaves_ = 1;
  while (tree_leaves_ < static_cast<size_t>(2 * d)) tree_leaves_ <<= 1;
  tree_leaves_ = std::max<size_t>(tree_leaves_, 2);
  pending_.assign(tree_leaves_, kIdle);  // padding leaves stay idle
  tree_.assign(tree_leaves_, 0);
  dev_fifo_.assign(d, {});
  for (auto& f : dev_fifo_) f.reserve(n);
  dev_head_.assign(d, 0);
  bus_heap_.assign(d, {});
  for (auto& h : bus_heap_) h.reserve(std::min(n, 64));
  bus_items_.reserve(m);
  satisfied_.assign(n, 0);
  start_.assign(n, 0);
  end_.assign(n, 0);
  run_order_.reserve(n);
  last_use_.assign(n, 0);
  floor_cost_.resize(n);
  for (NodeId v = 0; v < n; ++v) floor_cost_[v] = std::floor(graph.cost_us(v));
  live_.assign(d, {});
  for (auto& l : live_) l.reserve(64);
  mem_cur_.assign(d, 0);
  result_.peak_mem_bytes.assign(d, 0);
  result_.param_bytes.assign(d, 0);
  result_.over_capacity.assign(d, false);
}

inline void Simulator::push_release(double t, NodeId parent, int32_t out_plus_one) {
  const Key key = (static_cast<Key>(time_bits(t)) << 64) |
                  (static_cast<Key>(static_cast<uint32_t>(graph_.name_rank(parent))) << 32) |
                  static_cast<uint32_t>(out_plus_one);
  releases_.push_back(key);
  size_t i = releases_.size() - 1;
  while (i > 0) {
    const size_t parent_i = (i - 1) >> 1;
    if (releases_[parent_i] < key) break;
    releases_[i] = releases_[parent_i];
    i = parent_i;
  }
  releases_[i] = key;
}

inline Simulator::Key Simulator::pop_release() {
  const Key top = releases_[0];
  const Key last = releases_.back();
  releases_.pop_back();
  const size_t n = releases_.size();
  if (n == 0) return top;
  size_t i = 0;
  for (;;) {
    size_t c = 2 * i + 1;
    if (c >= n) break;
    if (c + 1 < n && releases_[c + 1] < releases_[c]) ++c;
    if (last < releases_[c]) break;
    releases_[i] = releases_[c];
    i = c;
  }
  releases_[i] = last;
  return top;
}

// Bus queues are ordered by (ready time, sequence number).  Bus items get ids in creation
// order, the same order as their sequence numbers, so (ready bits, id) is the key.
void Simulator::bus_push(int d, int32_t item) {
  auto& h = bus_heap_[d];
  const Key key = (static_cast<Key>(time_bits(bus_items_[item].ready)) << 64) |
                  static_cast<uint32_t>(item);
  h.push_back(key);
  size_t i = h.size() - 1;
  while (i > 0) {
    size_t parent = (i - 1) >> 1;
    if (h[parent] < key) break;
    h[i] = h[parent];
    i = parent;
  }
  h[i] = key;
}

void Simulator::bus_pop(int d) {
  auto& h = bus_heap_[d];
  const Key last = h.back();
  h.pop_back();
  const size_t n = h.size();
  if (n == 0) return;
  size_t i = 0;
  for (;;) {
    size_t c = 2 * i + 1;
    if (c >= n) break;
    if (c + 1 < n && h[c + 1] < h[c]) ++c;
    if (last < h[c]) break;
    h[i] = h[c];
    i = c;
  }
  h[i] = last;
}

// A tournament tree over the resources' next run times: leaves are resources, each inner
// node holds the winner (earliest time, then lowest index) of its two children.
inline void Simulator::set_pending(int j, double t) {
  pending_[j] = t;
  size_t i = (static_cast<size_t>(j) + tree_leaves_) >> 1;
  while (i >= 1) {
    const size_t l = 2 * i, r = 2 * i + 1;
    const int a = l >= tree_leaves_ ? static_cast<int>(l - tree_leaves_) : tree_[l];
    const int b = r >= tree_leaves_ ? static_cast<int>(r - tree_leaves_) : tree_[r];
    tree_[i] = pending_[b] < pending_[a] ? b : a;
    i >>= 1;
  }
}

inline void Simulator::enqueue_device(int d, NodeId v, double t) {
  // Device queues receive items in nondecreasing ready time (always "now"), so (ready, seq)
  // order is insertion order: a FIFO is exact.
  dev_fifo_[d].push_back(v);
  ++seq_;
  const int j = cluster_.num_devices() + d;
  if (pending_[j] == kIdle) set_pending(j, t);
}

inline void Simulator::release_children(NodeId v, int32_t out_plus_one, double now) {
  const Placement& p = *placement_;
  const int32_t dv = p.device[v];
  const int32_t b = rchild_offset_[v], e = rchild_offset_[v + 1];
  for (int32_t i = b; i < e; ++i) {
    const NodeId w = rchild_[i];
    const bool local = p.device[w] == dv;
    if (out_plus_one == 0 ? !local : (local || rchild_out_[i] != out_plus_one - 1)) continue;
    if (++satisfied_[w] == graph_.in_degree(w)) enqueue_device(p.device[w], w, now);
  }
}

const SimResult& Simulator::simulate(const Placement& p, ExecutionTrace* trace) {
  if (hetero_) return hetero_->simulate(p, trace);
  const Graph& g = graph_;
  const int n = g.num_nodes();
  const int num_dev = cluster_.num_devices();
  PLACETO_CHECK_EQ(static_cast<int>(p.device.size()), n);
  PLACETO_CHECK_EQ(p.num_devices, num_dev);
  const CompatConstants& k = cluster_.compat;
  placement_ = &p;
  if (trace) trace->clear();

  releases_.clear();
  std::fill(pending_.begin(), pending_.end(), kIdle);
  for (size_t i = tree_leaves_ - 1; i >= 1; --i) {  // all idle: each subtree's leftmost leaf
    const size_t l = 2 * i;
    tree_[i] = l >= tree_leaves_ ? static_cast<int>(l - tree_leaves_) : tree_[l];
  }
  for (int d = 0; d < num_dev; ++d) {
    dev_fifo_[d].clear();
    dev_head_[d] = 0;
    bus_heap_[d].clear();
  }
  bus_items_.clear();
  run_order_.clear();
  std::fill(satisfied_.begin(), satisfied_.end(), 0);
  seq_ = 0;

  for (NodeId v = 0; v < n; ++v)
    if (g.in_degree(v) == 0) enqueue_device(p.device[v], v, k.init_offset_us);

  double now = 0;
  for (;;) {
    // The next resource event: earliest time, then lowest index (buses before devices).
    const int j = tree_[1];
    const double tj = pending_[j];
    // Releases go first at equal times.
    if (!releases_.empty()) {
      const Key top = releases_[0];
      const double tr = bits_time(static_cast<uint64_t>(top >> 64));
      if (tr <= tj) {
        pop_release();
        now = tr;
        const NodeId v = node_of_rank_[static_cast<uint32_t>(top >> 32)];
        release_children(v, static_cast<int32_t>(static_cast<uint32_t>(top)), now);
        continue;
      }
    }
    if (tj == kIdle) break;
    now = tj;
    if (j >= num_dev) {  // device run
      const int d = j - num_dev;
      auto& fifo = dev_fifo_[d];
      if (dev_head_[d] == fifo.size()) {
        set_pending(j, kIdle);
        continue;
      }
      const NodeId v = fifo[dev_head_[d]++];
      const double c = g.cost_us(v);
      const double done = now + c;
      start_[v] = now;
      end_[v] = done;
      run_order_.push_back(v);
      if (trace) trace->ops.push_back({v, d, now, done});
      set_pending(j, c == 0 ? done : done + k.delta1_us);
      // Children on this device are released when v ends; the others are grouped by output
      // index, one transfer per index in order of first appearance among the edges.
      group_out_.clear();
      bool any_local = false;
      for (int i = g.child_begin(v), ce = g.child_end(v); i < ce; ++i) {
        const EdgeId e = g.child_edges()[i];
        if (p.device[g.edge_dst(e)] == d) {
          any_local = true;
        } else {
          const int out = g.edge_out(e);
          if (std::find(group_out_.begin(), group_out_.end(), out) == group_out_.end())
            group_out_.push_back(out);
        }
      }
      if (any_local) push_release(done, v, 0);
      for (int out : group_out_) {
        BusItem item;
        item.ready = done;
        item.seq = seq_++;
        item.delay = static_cast<double>(g.out_bytes(v, out)) / k.transfer_bytes_per_us;
        item.src = v;
        item.out = out;
        const int32_t id = static_cast<int32_t>(bus_items_.size());
        bus_items_.push_back(item);
        bus_push(d, id);
        if (pending_[d] == kIdle) set_pending(d, done);
      }
    } else {  // bus run
      const int d = j;
      if (bus_heap_[d].empty()) {
        set_pending(j, kIdle);
        continue;
      }
      const BusItem item = bus_items_[static_cast<uint32_t>(bus_heap_[d][0])];
      if (item.ready > now) {
        // Not ready yet: it stays queued with its original (ready, seq); the bus stays busy.
        set_pending(j, item.ready);
        continue;
      }
      bus_pop(d);
      const double arrive = now + item.delay;
      push_release(arrive, item.src, item.out + 1);
      if (trace) {
        ExecutionTrace::Transfer tr{item.src, item.out, d, now, arrive, g.out_bytes(item.src, item.out), {}, -1};
        for (int i = g.child_begin(item.src); i < g.child_end(item.src); ++i) {
          const EdgeId e = g.child_edges()[i];
          if (g.edge_out(e) == item.out && p.device[g.edge_dst(e)] != d)
            tr.dsts.push_back(g.edge_dst(e));
        }
        trace->transfers.push_back(std::move(tr));
      }
      set_pending(j, arrive + k.delta2_us);
    }
  }
  if (static_cast<int>(run_order_.size()) != n) {
    std::vector<char> ran(n, 0);
    for (NodeId v : run_order_) ran[v] = 1;
    for (NodeId v = 0; v < n; ++v)
      if (!ran[v])
        throw InputError("graph '" + g.name() + "': op '" + g.node_name(v) +
                         "' never runs (the graph has a cycle)");
  }
  result_.runtime_us = now;
  if (compute_memory_ || cluster_.has_memory_limits()) compute_memory(p);
  return result_;
}

void Simulator::compute_memory(const Placement& p) {
  // The reference sorts (time, sign, amount, device) records with allocations before frees at
  // equal times and takes each device's running maximum.  Equivalently: walk allocations in
  // start order (the order ops started) and, before each, drop the tensors whose free time is
  // strictly earlier; a per-device min-heap of free times does that without a global sort.
  const Graph& g = graph_;
  const int num_dev = cluster_.num_devices();
  auto later = [](const std::pair<double, int64_t>& a, const std::pair<double, int64_t>& b) {
    return a.first > b.first;
  };
  for (int d = 0; d < num_dev; ++d) {
    live_[d].clear();
    mem_cur_[d] = 0;
    result_.peak_mem_bytes[d] = 0;
  }
  // The time a child w last needs its inputs, in the reference's integer arithmetic.
  for (NodeId w : run_order_) last_use_[w] = std::floor(start_[w]) + floor_cost_[w] - 1.0;
  for (NodeId v : run_order_) {
    const int64_t m = g.total_out_bytes(v);
    if (m <= 0) continue;
    const double t = start_[v];
    double free_t = t;
    for (int32_t i = rchild_offset_[v]; i < rchild_offset_[v + 1]; ++i)
      free_t = std::max(free_t, last_use_[rchild_[i]]);
    const int d = p.device[v];
    auto& live = live_[d];
    while (!live.empty() && live.front().first < t) {
      mem_cur_[d] -= live.front().second;
      std::pop_heap(live.begin(), live.end(), later);
      live.pop_back();
    }
    mem_cur_[d] += m;
    live.emplace_back(free_t, m);
    std::push_heap(live.begin(), live.end(), later);
    if (mem_cur_[d] > result_.peak_mem_bytes[d]) result_.peak_mem_bytes[d] = mem_cur_[d];
  }
  finish_memory_result(g, cluster_, p, &result_);
}

void finish_memory_result(const Graph& g, const Cluster& c, const Placement& p, SimResult* r) {
  std::fill(r->param_bytes.begin(), r->param_bytes.end(), 0);
  for (NodeId v = 0; v < g.num_nodes(); ++v) r->param_bytes[p.device[v]] += g.param_bytes(v);
  r->memory_ok = true;
  for (int d = 0; d < c.num_devices(); ++d) {
    const double cap = c.devices[d].memory_bytes;
    const bool over =
        cap > 0 && static_cast<double>(r->peak_mem_bytes[d] + r->param_bytes[d]) > cap;
    r->over_capacity[d] = over;
    if (over) r->memory_ok = false;
  }
}

}  // namespace placeto
