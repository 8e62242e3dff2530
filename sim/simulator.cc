#include "sim/simulator.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "common/error.h"
#include "sim/hetero_simulator.h"
#include "sim/peak_memory.h"

namespace placeto {

namespace {
constexpr double kIdle = std::numeric_limits<double>::infinity();

// Non-negative doubles order like their bit patterns read as unsigned integers.
inline uint64_t time_bits(double t) {
  uint64_t b;
  std::memcpy(&b, &t, sizeof b);
  return b;
}
inline uint64_t hi_bits(unsigned __int128 k) { return static_cast<uint64_t>(k >> 64); }
// The flag of a release key made at its own time (see Simulator::Key).
constexpr uint64_t kMadeNow = uint64_t{1} << 63;
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
  num_dev_ = cluster.num_devices();
  PLACETO_CHECK_GE(num_dev_, 1);
  // Sequence numbers and ranks must fit the 31-bit field of a key.
  PLACETO_CHECK_LT(static_cast<int64_t>(n) + m, int64_t{1} << 31);
  peak_memory_ = std::make_unique<PeakMemory>(graph, num_dev_);
  cost_.resize(n);
  in_degree_.resize(n);
  rank_.resize(n);
  node_of_rank_.assign(n, 0);
  for (NodeId v = 0; v < n; ++v) {
    cost_[v] = graph.cost_us(v);
    in_degree_[v] = graph.in_degree(v);
    rank_[v] = graph.name_rank(v);
    node_of_rank_[rank_[v]] = v;
    if (in_degree_[v] == 0) sources_.push_back(v);
  }
  // Children in file order; one slot per distinct (parent, output index).
  child_offset_.assign(n + 1, 0);
  child_.resize(m);
  child_slot_.resize(m);
  for (NodeId v = 0; v < n; ++v) {
    const int32_t first_slot = static_cast<int32_t>(slot_out_.size());
    for (int i = graph.child_begin(v); i < graph.child_end(v); ++i) {
      const EdgeId e = graph.child_edges()[i];
      const int out = graph.edge_out(e);
      int32_t s = first_slot;
      while (s < static_cast<int32_t>(slot_out_.size()) && slot_out_[s] != out) ++s;
      if (s == static_cast<int32_t>(slot_out_.size())) {
        slot_out_.push_back(out);
        slot_bytes_.push_back(static_cast<double>(graph.out_bytes(v, out)));
      }
      child_[i] = graph.edge_dst(e);
      child_slot_[i] = s;
    }
    child_offset_[v + 1] = graph.child_end(v);
  }
  slot_transfer_.assign(slot_out_.size(), -1);
  next_edge_.assign(m, -1);
  transfers_.reserve(m);
  remaining_.resize(n);
  ready_key_.resize(n);
  dev_heap_.assign(num_dev_, {});
  for (auto& h : dev_heap_) h.reserve(n);
  bus_head_.assign(num_dev_, -1);
  bus_tail_.assign(num_dev_, -1);
  tree_leaves_ = 2;
  while (tree_leaves_ < static_cast<size_t>(2 * num_dev_)) tree_leaves_ <<= 1;
  tree_bits_.assign(2 * tree_leaves_, time_bits(kIdle));  // padding leaves stay idle
  free_at_.assign(tree_leaves_, 0.0);
  tree_.assign(2 * tree_leaves_, 0);
  for (size_t i = 2 * tree_leaves_ - 1; i >= 1; --i)  // all idle: each subtree's leftmost leaf
    tree_[i] = i >= tree_leaves_ ? static_cast<int32_t>(i - tree_leaves_) : tree_[2 * i];
  start_.assign(n, 0);
  end_.assign(n, 0);
  run_order_.reserve(n);
  result_.peak_mem_bytes.assign(num_dev_, 0);
  result_.param_bytes.assign(num_dev_, 0);
  result_.over_capacity.assign(num_dev_, false);
}

inline double Simulator::pending(int j) const { return bits_time(tree_bits_[tree_leaves_ + j]); }

// A tournament tree over the resources' next run times.  The new time of leaf j is carried up
// its path and compared with the sibling subtree's winner at each level; the siblings are off
// the path, so their loads do not wait for the stores made on the way up.
inline void Simulator::set_pending(int j, double t) {
  size_t i = static_cast<size_t>(j) + tree_leaves_;
  int32_t winner = j;
  uint64_t tb = time_bits(t);
  tree_bits_[i] = tb;
  while (i > 1) {
    const size_t sibling = i ^ 1;
    const uint64_t sb = tree_bits_[sibling];
    const int32_t sw = tree_[sibling];
    // At equal times the left subtree (lower indices) wins: a left sibling (i odd) takes
    // over at sb <= tb.  Integer compares on time bits (+inf included, no overflow) so that
    // the compiler selects without branches: the parity of the path is unpredictable.
    const bool take = sb < tb + (i & 1);
    tb = take ? sb : tb;
    winner = take ? sw : winner;
    i >>= 1;
    tree_bits_[i] = tb;
    tree_[i] = winner;
  }
}

inline void Simulator::dev_push(int d, Key key) {
  auto& h = dev_heap_[d];
  h.push_back(key);
  size_t i = h.size() - 1;
  while (i > 0) {
    const size_t parent = (i - 1) >> 1;
    if (h[parent] < key) break;
    h[i] = h[parent];
    i = parent;
  }
  h[i] = key;
}

inline Simulator::Key Simulator::dev_pop(int d) {
  auto& h = dev_heap_[d];
  const Key top = h[0];
  const Key last = h.back();
  h.pop_back();
  const size_t n = h.size();
  if (n == 0) return top;
  size_t i = 0;
  for (;;) {
    size_t c = 2 * i + 1;
    if (c >= n) break;
    c += (c + 1 < n && h[c + 1] < h[c]) ? 1 : 0;
    if (last < h[c]) break;
    h[i] = h[c];
    i = c;
  }
  h[i] = last;
  return top;
}

// A device runs next when it is free and its earliest queued op is released.
inline void Simulator::schedule_device(int d, double t) {
  const int j = num_dev_ + d;
  const double run = std::max(free_at_[j], t);
  if (run < pending(j)) set_pending(j, run);
}

inline void Simulator::release(NodeId w, uint64_t hi, uint64_t lo) {
  const Key key = (static_cast<Key>(hi) << 64) | lo;
  Key& k = ready_key_[w];
  k = std::max(k, key);
  if (--remaining_[w] == 0) {
    const int d = dev_of_[w];
    dev_push(d, k | static_cast<uint32_t>(rank_[w]));
    schedule_device(d, bits_time(hi_bits(k)));
  }
}

inline int32_t Simulator::start_transfer(int d, NodeId v, int32_t slot, double ready,
                                         int32_t edge) {
  const int32_t id = static_cast<int32_t>(transfers_.size());
  transfers_.push_back({ready, slot_bytes_[slot] / transfer_speed_, v, slot, edge, edge, -1});
  slot_transfer_[slot] = id;
  if (bus_tail_[d] >= 0)
    transfers_[bus_tail_[d]].next = id;
  else
    bus_head_[d] = id;
  bus_tail_[d] = id;
  if (pending(d) == kIdle) set_pending(d, std::max(free_at_[d], ready));
  return id;
}

inline void Simulator::run_device(int d, double now, ExecutionTrace* trace) {
  const int j = num_dev_ + d;
  auto& h = dev_heap_[d];
  // pending() never runs a device before its earliest queued op is released, so h[0] is.
  const NodeId v = node_of_rank_[static_cast<uint32_t>(dev_pop(d))];
  const double c = cost_[v];
  const double done = now + c;
  start_[v] = now;
  end_[v] = done;
  run_order_.push_back(v);
  if (trace) trace->ops.push_back({v, d, now, done});
  free_at_[j] = c == 0 ? done : done + delta1_;
  set_pending(j, h.empty() ? kIdle : std::max(free_at_[j], bits_time(hi_bits(h[0]))));
  // Children on this device are released at `done`; the others are grouped by output index
  // into transfers, created in order of first appearance among the edges.
  const int32_t first_transfer = static_cast<int32_t>(transfers_.size());
  const uint64_t hi = time_bits(done);
  const uint64_t lo = done == now ? kMadeNow | (static_cast<uint64_t>(seq_++) << 32)
                                  : static_cast<uint64_t>(rank_[v]) << 32;
  for (int32_t i = child_offset_[v], e = child_offset_[v + 1]; i < e; ++i) {
    const NodeId w = child_[i];
    if (dev_of_[w] == d) {
      release(w, hi, lo);
      continue;
    }
    const int32_t slot = child_slot_[i];
    const int32_t id = slot_transfer_[slot];
    if (id >= 0) {
      next_edge_[transfers_[id].last_edge] = i;
      transfers_[id].last_edge = i;
    } else {
      start_transfer(d, v, slot, done, i);
    }
  }
  // Between runs every slot maps to no transfer.
  for (int32_t id = first_transfer, e = static_cast<int32_t>(transfers_.size()); id < e; ++id)
    slot_transfer_[transfers_[id].slot] = -1;
}

inline void Simulator::run_bus(int d, double now, ExecutionTrace* trace) {
  // pending() runs a bus when it is free and its first transfer is ready, so the queue is not
  // empty and its head is ready.
  const Transfer& tr = transfers_[bus_head_[d]];
  bus_head_[d] = tr.next;
  const double arrive = now + tr.delay;
  free_at_[d] = arrive + delta2_;
  if (tr.next < 0) {
    bus_tail_[d] = -1;
    set_pending(d, kIdle);
  } else {
    set_pending(d, std::max(free_at_[d], transfers_[tr.next].ready));
  }
  const uint64_t hi = time_bits(arrive);
  const uint64_t lo = arrive == now ? kMadeNow | (static_cast<uint64_t>(seq_++) << 32)
                                    : static_cast<uint64_t>(rank_[tr.src]) << 32;
  for (int32_t i = tr.first_edge;; i = next_edge_[i]) {
    release(child_[i], hi, lo);
    if (i == tr.last_edge) break;
  }
  if (trace) {
    const int out = slot_out_[tr.slot];
    ExecutionTrace::Transfer t{tr.src, out, d, now, arrive, graph_.out_bytes(tr.src, out), {}, -1};
    for (int32_t i = tr.first_edge;; i = next_edge_[i]) {
      t.dsts.push_back(child_[i]);
      if (i == tr.last_edge) break;
    }
    trace->transfers.push_back(std::move(t));
  }
}

const SimResult& Simulator::simulate(const Placement& p, ExecutionTrace* trace) {
  if (hetero_) return hetero_->simulate(p, trace);
  const Graph& g = graph_;
  const int n = g.num_nodes();
  PLACETO_CHECK_EQ(static_cast<int>(p.device.size()), n);
  PLACETO_CHECK_EQ(p.num_devices, num_dev_);
  const CompatConstants& k = cluster_.compat;
  delta1_ = k.delta1_us;
  delta2_ = k.delta2_us;
  transfer_speed_ = k.transfer_bytes_per_us;
  dev_of_ = p.device.data();
  if (trace) trace->clear();

  std::fill(tree_bits_.begin(), tree_bits_.end(), time_bits(kIdle));
  std::fill(free_at_.begin(), free_at_.end(), 0.0);
  for (size_t i = tree_leaves_ - 1; i >= 1; --i) tree_[i] = tree_[2 * i];  // leftmost leaves
  for (int d = 0; d < num_dev_; ++d) {
    dev_heap_[d].clear();
    bus_head_[d] = bus_tail_[d] = -1;
  }
  transfers_.clear();
  run_order_.clear();
  std::copy(in_degree_.begin(), in_degree_.end(), remaining_.begin());
  std::fill(ready_key_.begin(), ready_key_.end(), Key{0});
  seq_ = 0;

  // Sources are queued at init_offset in file order, before any release (none can happen
  // earlier, and those at init_offset are made then, so they carry the flag).
  const uint64_t init_hi = time_bits(k.init_offset_us);
  for (NodeId v : sources_) {
    const Key key = (static_cast<Key>(init_hi) << 64) | (static_cast<uint64_t>(v) << 32) |
                    static_cast<uint32_t>(rank_[v]);
    dev_push(dev_of_[v], key);
    schedule_device(dev_of_[v], k.init_offset_us);
  }

  double now = 0;
  for (;;) {
    // The next resource event: earliest time, then lowest index (buses before devices).
    const int j = tree_[1];
    const double t = bits_time(tree_bits_[1]);
    if (t == kIdle) break;
    now = t;
    if (j >= num_dev_)
      run_device(j - num_dev_, now, trace);
    else
      run_bus(j, now, trace);
  }
  if (static_cast<int>(run_order_.size()) != n) {
    std::vector<char> ran(n, 0);
    for (NodeId v : run_order_) ran[v] = 1;
    for (NodeId v = 0; v < n; ++v)
      if (!ran[v])
        throw InputError("graph '" + g.name() + "': op '" + g.node_name(v) +
                         "' never runs (the graph has a cycle)");
  }
  // The reference also processes a run event when a resource's gap ends with its queue empty
  // (it goes idle) or its head not ready (put back); those change nothing else, so they are
  // not simulated, but their times count: the last event is the latest end of a gap.
  for (double f : free_at_) now = std::max(now, f);
  result_.runtime_us = now;
  if (compute_memory_ || cluster_.has_memory_limits()) {
    peak_memory_->compute(p, start_, run_order_, &result_.peak_mem_bytes);
    finish_memory_result(g, cluster_, p, &result_);
  }
  return result_;
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
