#include "sim/hetero_simulator.h"

#include <algorithm>
#include <cmath>

#include "common/error.h"

namespace placeto {

namespace {
// Event kinds in processing order at equal times: release < bus < device.
constexpr uint64_t kRelease = 0;
constexpr uint64_t kBus = 1ull << 62;
constexpr uint64_t kDevice = 2ull << 62;
}  // namespace

HeteroSimulator::HeteroSimulator(const Graph& graph, const Cluster& cluster)
    : graph_(graph),
      cluster_(cluster),
      hetero_(cluster.heterogeneous()),
      per_link_(cluster.heterogeneous() && cluster.hetero.contention == Contention::kPerLink),
      num_dev_(cluster.num_devices()) {
  const int n = graph.num_nodes();
  const int m = graph.num_edges();
  const int d = cluster.num_devices();
  PLACETO_CHECK_GE(d, 1);
  // Release events are keyed by (parent name, child name) in byte order.
  release_order_.resize(m);
  for (EdgeId e = 0; e < m; ++e)
    release_order_[e] = kRelease | (static_cast<uint64_t>(graph.name_rank(graph.edge_src(e))) *
                                        static_cast<uint64_t>(n) +
                                    static_cast<uint64_t>(graph.name_rank(graph.edge_dst(e))));
  if (hetero_) {
    PLACETO_CHECK_EQ(cluster.links.size(), static_cast<size_t>(d) * d);
    speed_.resize(d);
    for (int i = 0; i < d; ++i) {
      speed_[i] = cluster.devices[i].speed;
      PLACETO_CHECK_GT(speed_[i], 0.0);
    }
    link_bw_.assign(static_cast<size_t>(d) * d, 1.0);
    link_lat_.assign(static_cast<size_t>(d) * d, 0.0);
    for (int s = 0; s < d; ++s)
      for (int t = 0; t < d; ++t)
        if (s != t) {
          PLACETO_CHECK_GT(cluster.link(s, t).bytes_per_us, 0.0);
          link_bw_[s * d + t] = cluster.link(s, t).bytes_per_us;
          link_lat_[s * d + t] = cluster.link(s, t).latency_us;
        }
  }
  const int queues = per_link_ ? d * d : d;
  heap_.reserve(m + 2 * queues + 16);
  dev_fifo_.assign(d, {});
  for (auto& f : dev_fifo_) f.reserve(n);
  dev_head_.assign(d, 0);
  dev_busy_.assign(d, 0);
  bus_busy_.assign(queues, 0);
  bus_heap_.assign(queues, {});
  for (auto& h : bus_heap_) h.reserve(std::min(n, 64));
  bus_items_.reserve(m);
  bus_edges_.reserve(m);
  satisfied_.assign(n, 0);
  start_.assign(n, 0);
  end_.assign(n, 0);
  mem_records_.reserve(2 * n);
  mem_cur_.assign(d, 0);
  result_.peak_mem_bytes.assign(d, 0);
  result_.param_bytes.assign(d, 0);
  result_.over_capacity.assign(d, false);
}

inline void HeteroSimulator::push_event(double t, uint64_t order, int32_t payload) {
  heap_.push_back(Event{t, order, payload});
  size_t i = heap_.size() - 1;
  Event ev = heap_[i];
  while (i > 0) {
    size_t parent = (i - 1) >> 1;
    const Event& p = heap_[parent];
    if (p.t < ev.t || (p.t == ev.t && p.order < ev.order)) break;
    heap_[i] = p;
    i = parent;
  }
  heap_[i] = ev;
}

inline HeteroSimulator::Event HeteroSimulator::pop_event() {
  Event top = heap_[0];
  Event last = heap_.back();
  heap_.pop_back();
  const size_t n = heap_.size();
  if (n == 0) return top;
  size_t i = 0;
  for (;;) {
    size_t c = 2 * i + 1;
    if (c >= n) break;
    if (c + 1 < n) {
      const Event& a = heap_[c];
      const Event& b = heap_[c + 1];
      if (b.t < a.t || (b.t == a.t && b.order < a.order)) ++c;
    }
    const Event& ch = heap_[c];
    if (last.t < ch.t || (last.t == ch.t && last.order < ch.order)) break;
    heap_[i] = ch;
    i = c;
  }
  heap_[i] = last;
  return top;
}

void HeteroSimulator::bus_push(int d, int32_t item) {
  auto& h = bus_heap_[d];
  h.push_back(item);
  size_t i = h.size() - 1;
  while (i > 0) {
    size_t parent = (i - 1) >> 1;
    if (!bus_less(item, h[parent])) break;
    h[i] = h[parent];
    i = parent;
  }
  h[i] = item;
}

void HeteroSimulator::bus_pop(int d) {
  auto& h = bus_heap_[d];
  int32_t last = h.back();
  h.pop_back();
  const size_t n = h.size();
  if (n == 0) return;
  size_t i = 0;
  for (;;) {
    size_t c = 2 * i + 1;
    if (c >= n) break;
    if (c + 1 < n && bus_less(h[c + 1], h[c])) ++c;
    if (!bus_less(h[c], last)) break;
    h[i] = h[c];
    i = c;
  }
  h[i] = last;
}

inline void HeteroSimulator::schedule_release(double t, EdgeId e) {
  push_event(t, release_order_[e], e);
}

inline void HeteroSimulator::enqueue_device(int d, NodeId v, double t) {
  // Device queues receive items in nondecreasing ready time (always "now"), so (ready, seq)
  // order is insertion order: a FIFO is exact.
  dev_fifo_[d].push_back(v);
  ++seq_;
  if (!dev_busy_[d]) {
    dev_busy_[d] = 1;
    push_event(t, kDevice | static_cast<uint64_t>(d), d);
  }
}

const SimResult& HeteroSimulator::simulate(const Placement& p, ExecutionTrace* trace) {
  const Graph& g = graph_;
  const int n = g.num_nodes();
  PLACETO_CHECK_EQ(static_cast<int>(p.device.size()), n);
  PLACETO_CHECK_EQ(p.num_devices, num_dev_);
  placement_ = &p;
  trace_ = trace;
  if (trace) trace->clear();

  heap_.clear();
  for (int d = 0; d < num_dev_; ++d) {
    dev_fifo_[d].clear();
    dev_head_[d] = 0;
    dev_busy_[d] = 0;
  }
  for (size_t q = 0; q < bus_heap_.size(); ++q) {
    bus_busy_[q] = 0;
    bus_heap_[q].clear();
  }
  bus_items_.clear();
  bus_edges_.clear();
  std::fill(satisfied_.begin(), satisfied_.end(), 0);
  std::fill(start_.begin(), start_.end(), -1.0);
  seq_ = 0;

  const int ran = hetero_ ? run_events<true>(p) : run_events<false>(p);
  if (ran != n) {
    for (NodeId v = 0; v < n; ++v)
      if (start_[v] < 0)
        throw InputError("graph '" + g.name() + "': op '" + g.node_name(v) +
                         "' never runs (the graph has a cycle)");
  }
  compute_memory(p);
  return result_;
}

template <bool kHetero>
int HeteroSimulator::run_events(const Placement& p) {
  const Graph& g = graph_;
  const int n = g.num_nodes();
  const CompatConstants& k = cluster_.compat;
  const double op_gap = kHetero ? cluster_.hetero.op_gap_us : k.delta1_us;
  const double transfer_gap = kHetero ? cluster_.hetero.transfer_gap_us : k.delta2_us;
  ExecutionTrace* trace = trace_;

  for (NodeId v = 0; v < n; ++v)
    if (g.in_degree(v) == 0) enqueue_device(p.device[v], v, k.init_offset_us);

  const std::vector<EdgeId>& child_edges = g.child_edges();
  double now = 0;
  int ran = 0;
  while (!heap_.empty()) {
    const Event ev = pop_event();
    now = ev.t;
    const uint64_t kind = ev.order & (3ull << 62);
    if (kind == kRelease) {
      const EdgeId e = ev.payload;
      const NodeId child = g.edge_dst(e);
      if (++satisfied_[child] == g.in_degree(child)) enqueue_device(p.device[child], child, now);
    } else if (kind == kDevice) {
      const int d = ev.payload;
      auto& fifo = dev_fifo_[d];
      if (dev_head_[d] == fifo.size()) {
        dev_busy_[d] = 0;
        continue;
      }
      const NodeId v = fifo[dev_head_[d]++];
      const double c = kHetero ? g.cost_us(v) / speed_[d] : g.cost_us(v);
      const double done = now + c;
      start_[v] = now;
      end_[v] = done;
      ++ran;
      if (trace) trace->ops.push_back({v, d, now, done});
      push_event(c == 0 ? done : done + op_gap, kDevice | static_cast<uint64_t>(d), d);
      // Children on this device are released when v ends; the others are grouped by output
      // index (compatible: one transfer per index, whichever devices the children are on;
      // heterogeneous: one per (index, destination device)), in order of first appearance.
      group_out_.clear();
      const int cb = g.child_begin(v), ce = g.child_end(v);
      for (int i = cb; i < ce; ++i) {
        const EdgeId e = child_edges[i];
        const int dst = p.device[g.edge_dst(e)];
        if (dst == d) {
          schedule_release(done, e);
        } else {
          const int key = kHetero ? g.edge_out(e) * num_dev_ + dst : g.edge_out(e);
          if (std::find(group_out_.begin(), group_out_.end(), key) == group_out_.end())
            group_out_.push_back(key);
        }
      }
      for (int key : group_out_) {
        const int out = kHetero ? key / num_dev_ : key;
        const int dst = kHetero ? key % num_dev_ : -1;
        BusItem item;
        item.ready = done;
        item.seq = seq_++;
        if (kHetero) {
          const int link = d * num_dev_ + dst;
          item.delay = static_cast<double>(g.out_bytes(v, out)) / link_bw_[link];
          item.latency = link_lat_[link];
        } else {
          item.delay = static_cast<double>(g.out_bytes(v, out)) / k.transfer_bytes_per_us;
          item.latency = 0;
        }
        item.dst = dst;
        item.first = static_cast<int32_t>(bus_edges_.size());
        for (int i = cb; i < ce; ++i) {
          const EdgeId e = child_edges[i];
          if (g.edge_out(e) != out) continue;
          const int child_dev = p.device[g.edge_dst(e)];
          if (kHetero ? child_dev == dst : child_dev != d) bus_edges_.push_back(e);
        }
        item.count = static_cast<int32_t>(bus_edges_.size()) - item.first;
        const int32_t id = static_cast<int32_t>(bus_items_.size());
        bus_items_.push_back(item);
        const int q = kHetero ? bus_queue(d, dst) : d;
        bus_push(q, id);
        if (!bus_busy_[q]) {
          bus_busy_[q] = 1;
          push_event(done, kBus | static_cast<uint64_t>(q), q);
        }
      }
    } else {  // bus (or link) queue
      const int q = ev.payload;
      if (bus_heap_[q].empty()) {
        bus_busy_[q] = 0;
        continue;
      }
      const int32_t id = bus_top(q);
      const BusItem& item = bus_items_[id];
      if (item.ready > now) {
        // Not ready yet: it stays queued with its original (ready, seq); the bus stays busy.
        push_event(item.ready, kBus | static_cast<uint64_t>(q), q);
        continue;
      }
      bus_pop(q);
      const double sent = now + item.delay;
      // Latency delays the arrival but does not occupy the queue.  Adding a zero latency is
      // exact, so the compatible mode's arithmetic is unchanged.
      const double arrive = kHetero ? sent + item.latency : sent;
      for (int32_t i = item.first; i < item.first + item.count; ++i)
        schedule_release(arrive, bus_edges_[i]);
      if (trace) {
        ExecutionTrace::Transfer tr;
        const EdgeId e0 = bus_edges_[item.first];
        tr.src = g.edge_src(e0);
        tr.out = g.edge_out(e0);
        tr.device = placement_->device[tr.src];
        tr.dst_device = item.dst;
        tr.start_us = now;
        tr.end_us = arrive;
        tr.bytes = g.edge_bytes(e0);
        for (int32_t i = item.first; i < item.first + item.count; ++i)
          tr.dsts.push_back(g.edge_dst(bus_edges_[i]));
        trace->transfers.push_back(std::move(tr));
      }
      push_event(sent + transfer_gap, kBus | static_cast<uint64_t>(q), q);
    }
  }
  result_.runtime_us = now;
  return ran;
}

template int HeteroSimulator::run_events<false>(const Placement&);
template int HeteroSimulator::run_events<true>(const Placement&);

void HeteroSimulator::compute_memory(const Placement& p) {
  const Graph& g = graph_;
  const int n = g.num_nodes();
  mem_records_.clear();
  const std::vector<EdgeId>& child_edges = g.child_edges();
  for (NodeId v = 0; v < n; ++v) {
    const int64_t m = g.total_out_bytes(v);
    if (m <= 0) continue;
    double free_t = start_[v];
    for (int i = g.child_begin(v); i < g.child_end(v); ++i) {
      const NodeId w = g.edge_dst(child_edges[i]);
      const double dur = hetero_ ? g.cost_us(w) / speed_[p.device[w]] : g.cost_us(w);
      free_t = std::max(free_t, std::floor(start_[w]) + std::floor(dur) - 1.0);
    }
    mem_records_.push_back({start_[v], m, p.device[v]});
    mem_records_.push_back({free_t, -m, p.device[v]});
  }
  // (time, sign) with allocations before frees at equal times; the remaining tie-breaks of
  // the reference (amount, device) cannot change a per-device running maximum.
  std::sort(mem_records_.begin(), mem_records_.end(), [](const MemRecord& a, const MemRecord& b) {
    if (a.t != b.t) return a.t < b.t;
    return (a.amount > 0) > (b.amount > 0);
  });
  std::fill(mem_cur_.begin(), mem_cur_.end(), 0);
  std::fill(result_.peak_mem_bytes.begin(), result_.peak_mem_bytes.end(), 0);
  for (const MemRecord& r : mem_records_) {
    int64_t& cur = mem_cur_[r.device];
    cur += r.amount;
    if (cur > result_.peak_mem_bytes[r.device]) result_.peak_mem_bytes[r.device] = cur;
  }
  finish_memory_result(g, cluster_, p, &result_);
}

}  // namespace placeto
