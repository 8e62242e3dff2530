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
constexpr unsigned __int128 kNoKey = ~static_cast<unsigned __int128>(0);  // past a heap's end

// The per-edge helpers are called from a few places each on the hot path; gcc at -O2 keeps
// them out of line, and their call overhead was a tenth of a simulation.
#if defined(__GNUC__)
#define PLACETO_HOT_INLINE inline __attribute__((always_inline))
#else
#define PLACETO_HOT_INLINE inline
#endif

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
// Sets over_capacity and memory_ok from peak_mem_bytes and param_bytes.
void check_capacity(const Cluster& c, SimResult* r) {
  r->memory_ok = true;
  for (int d = 0; d < c.num_devices(); ++d) {
    const double cap = c.devices[d].memory_bytes;
    const bool over =
        cap > 0 && static_cast<double>(r->peak_mem_bytes[d] + r->param_bytes[d]) > cap;
    r->over_capacity[d] = over;
    if (over) r->memory_ok = false;
  }
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
    if (graph.param_bytes(v) != 0) param_ops_.push_back(v);
    if (cost_[v] == 0) always_exact_ = true;
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
  // Children grouped by slot, each group in edge order: what a lazy transfer releases.
  const size_t num_slots = slot_out_.size();
  slot_child_offset_.assign(num_slots + 1, 0);
  for (int32_t i = 0; i < m; ++i) ++slot_child_offset_[child_slot_[i] + 1];
  for (size_t s = 0; s < num_slots; ++s) slot_child_offset_[s + 1] += slot_child_offset_[s];
  slot_child_.resize(m);
  {
    std::vector<int32_t> fill(slot_child_offset_.begin(), slot_child_offset_.end() - 1);
    for (int32_t i = 0; i < m; ++i) slot_child_[fill[child_slot_[i]]++] = child_[i];
  }
  slot_delay_.assign(num_slots, 0.0);
  slot_arrive_.assign(num_slots, 0.0);
  slot_stamp_.assign(num_slots, 0);
  lazy_.resize(num_slots);  // at most one transfer per slot
  slot_lo_.assign(num_slots, 0);
  size_t table = 4;
  while (table < 2 * num_slots) table <<= 1;
  made_now_bits_.assign(table, 0);
  made_now_round_of_.assign(table, 0);
  remaining_.resize(n);
  ready_key_.resize(n);
  // Each device's heap: 1-based, a smallest key (0) at index 0 above the root and the
  // largest one at every index past the end, so sifts need no bounds tests.  Children of the
  // last entry lie below 2n + 2.
  heap_stride_ = 2 * static_cast<size_t>(n) + 2;
  heap_.assign(heap_stride_ * num_dev_, kNoKey);
  for (int d = 0; d < num_dev_; ++d) heap_[d * heap_stride_] = 0;
  heap_size_.assign(num_dev_, 0);
  lazy_head_.assign(num_dev_, -1);
  lazy_tail_.assign(num_dev_, -1);
  tree_leaves_ = 2;
  while (tree_leaves_ < static_cast<size_t>(2 * num_dev_)) tree_leaves_ <<= 1;
  tree_bits_.assign(2 * tree_leaves_, time_bits(kIdle));  // padding leaves stay idle
  free_at_.assign(tree_leaves_, 0.0);
  tree_.assign(2 * tree_leaves_, 0);
  for (size_t i = 2 * tree_leaves_ - 1; i >= 1; --i)  // all idle: each subtree's leftmost leaf
    tree_[i] = i >= tree_leaves_ ? static_cast<int32_t>(i - tree_leaves_) : tree_[2 * i];
  start_.assign(n, 0);
  end_.assign(n, 0);
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

PLACETO_HOT_INLINE void Simulator::dev_push(int d, Key key) {
  Key* h = heap_.data() + d * heap_stride_;
  size_t i = static_cast<size_t>(++heap_size_[d]);
  while (key < h[i >> 1]) {  // h[0] is smaller than any key
    h[i] = h[i >> 1];
    i >>= 1;
  }
  h[i] = key;
}

inline Simulator::Key Simulator::dev_pop(int d) {
  Key* h = heap_.data() + d * heap_stride_;
  const Key top = h[1];
  const size_t n = static_cast<size_t>(heap_size_[d]--);
  // The last entry sifts down from the root; when it was the root itself the root empties.
  const Key last = h[n] | (Key{0} - Key{n == 1});  // all ones when n == 1, without a branch
  h[n] = kNoKey;
  size_t i = 1;
  for (;;) {
    size_t c = 2 * i;
    c += h[c + 1] < h[c] ? 1 : 0;
    if (!(h[c] < last)) break;
    h[i] = h[c];
    i = c;
  }
  h[i] = last;
  return top;
}

// A device runs next when it is free and its earliest queued op is released.
PLACETO_HOT_INLINE void Simulator::schedule_device(int d, double t) {
  const int j = num_dev_ + d;
  const double run = std::max(free_at_[j], t);
  if (run < pending(j)) set_pending(j, run);
}

PLACETO_HOT_INLINE void Simulator::release(NodeId w, uint64_t hi, uint64_t lo) {
  const Key key = (static_cast<Key>(hi) << 64) | lo;
  Key& k = ready_key_[w];
  k = std::max(k, key);
  if (--remaining_[w] == 0) {
    const int d = dev_of_[w];
    dev_push(d, k | static_cast<uint32_t>(rank_[w]));
    schedule_device(d, bits_time(hi_bits(k)));
  }
}

// Records a made-now source's time; false if one was recorded at that time already in this
// simulation.  Open addressing over a table at least twice the number of slots; entries of
// earlier simulations are told apart by their round.
inline bool Simulator::note_made_now(double t) {
  const uint64_t bits = time_bits(t);
  const size_t mask = made_now_bits_.size() - 1;
  size_t i = static_cast<size_t>((bits * 0x9E3779B97F4A7C15ull) >> 40) & mask;
  while (made_now_round_of_[i] == made_now_round_) {
    if (made_now_bits_[i] == bits) return false;
    i = (i + 1) & mask;
  }
  made_now_round_of_[i] = made_now_round_;
  made_now_bits_[i] = bits;
  return true;
}

// Transfers leaving a device are queued in creation order, which is also (ready time, sequence)
// order: a device's ops end in order.  So the bus serves them one after another and each one's
// start and arrival are known when it is created.  Its releases are made at the start, before
// the arrival, and are made then and there unless the arrival equals the start (lazy).
PLACETO_HOT_INLINE double Simulator::start_transfer(int d, NodeId v, int32_t slot, double ready,
                                                    ExecutionTrace* trace) {
  const double start = std::max(free_at_[d], ready);
  const double arrive = start + slot_delay_[slot];
  free_at_[d] = arrive + delta2_;
  slot_stamp_[slot] = stamp_;
  slot_lo_[slot] = static_cast<uint64_t>(rank_[v]) << 32;
  double result = arrive;
  if (arrive == start && !exact_) {
    // Settled now as well, with sequence number 0: exact unless another made-now source has
    // the same time, which note_made_now() reports.
    slot_lo_[slot] = kMadeNow;
    if (!note_made_now(start)) clash_ = true;
  } else if (arrive == start) {
    const int32_t id = num_lazy_++;
    lazy_[id] = {start, v, slot, -1};
    if (lazy_tail_[d] >= 0) {
      lazy_[lazy_tail_[d]].next = id;
    } else {
      lazy_head_[d] = id;
      set_pending(d, start);
    }
    lazy_tail_[d] = id;
    result = -1;
  }
  slot_arrive_[slot] = result;
  if (trace) {
    const int out = slot_out_[slot];
    ExecutionTrace::Transfer t{v, out, d, start, arrive, graph_.out_bytes(v, out), {}, -1};
    for (int32_t i = slot_child_offset_[slot]; i < slot_child_offset_[slot + 1]; ++i)
      if (dev_of_[slot_child_[i]] != d) t.dsts.push_back(slot_child_[i]);
    trace->transfers.push_back(std::move(t));
  }
  return result;
}

inline void Simulator::run_device(int d, double now, ExecutionTrace* trace) {
  const int j = num_dev_ + d;
  // pending() never runs a device before its earliest queued op is released, so the top is.
  const NodeId v = node_of_rank_[static_cast<uint32_t>(dev_pop(d))];
  const double c = cost_[v];
  const double done = now + c;
  start_[v] = now;
  end_[v] = done;
  ++num_run_;
  if (memory_on_) peak_memory_->on_start(v, d, now);
  if (trace) trace->ops.push_back({v, d, now, done});
  free_at_[j] = c == 0 ? done : done + delta1_;
  const Key next = heap_[d * heap_stride_ + 1];
  set_pending(j, heap_size_[d] == 0 ? kIdle : std::max(free_at_[j], bits_time(hi_bits(next))));
  // Children on this device are released at `done`; the others are grouped by output index
  // into transfers, created in order of first appearance among the edges.
  const uint64_t hi = time_bits(done);
  const uint64_t made_before = static_cast<uint64_t>(rank_[v]) << 32;
  const uint64_t lo = done == now ? kMadeNow | (static_cast<uint64_t>(seq_++) << 32) : made_before;
  clash_ |= done == now && !exact_;  // a made-now source that transfers do not see
  for (int32_t i = child_offset_[v], e = child_offset_[v + 1]; i < e; ++i) {
    const NodeId w = child_[i];
    if (dev_of_[w] == d) {
      release(w, hi, lo);
      continue;
    }
    const int32_t slot = child_slot_[i];
    const double arrive =
        slot_stamp_[slot] == stamp_ ? slot_arrive_[slot] : start_transfer(d, v, slot, done, trace);
    if (arrive >= 0) release(w, time_bits(arrive), slot_lo_[slot]);
  }
}

// A lazy transfer: its releases take the next sequence number.
inline void Simulator::run_bus(int d, double now) {
  const LazyTransfer& tr = lazy_[lazy_head_[d]];
  lazy_head_[d] = tr.next;
  if (tr.next < 0) {
    lazy_tail_[d] = -1;
    set_pending(d, kIdle);
  } else {
    set_pending(d, lazy_[tr.next].start);
  }
  const uint64_t hi = time_bits(now);
  const uint64_t lo = kMadeNow | (static_cast<uint64_t>(seq_++) << 32);
  for (int32_t i = slot_child_offset_[tr.slot], e = slot_child_offset_[tr.slot + 1]; i < e; ++i) {
    const NodeId w = slot_child_[i];
    if (dev_of_[w] != d) release(w, hi, lo);
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
  if (delay_speed_ != k.transfer_bytes_per_us) {
    delay_speed_ = k.transfer_bytes_per_us;
    for (size_t s = 0; s < slot_delay_.size(); ++s) slot_delay_[s] = slot_bytes_[s] / delay_speed_;
  }
  dev_of_ = p.device.data();
  // First with 0-byte transfers settled when their op runs; again with them as bus events
  // (exact event order) if two made-now sources shared a time.  Graphs with zero-cost ops
  // go to the exact order at once: their made-now sources share times all the time.  So do
  // simulations after recent clashes (clash_score_), so that a graph where they are the rule
  // mostly runs once; the score decays, so the fast path is tried again now and then.
  const bool skip_fast = always_exact_ || clash_score_ >= 8;
  if (skip_fast) clash_score_ = std::max(0, clash_score_ - 1);
  double now = 0;
  for (bool exact = skip_fast;; exact = true) {
    exact_ = exact;
    clash_ = false;
    if (++made_now_round_ == 0) {  // wrapped: no entry may look recorded in this round
      std::fill(made_now_round_of_.begin(), made_now_round_of_.end(), 0);
      made_now_round_ = 1;
    }
    if (trace) trace->clear();

    std::fill(tree_bits_.begin(), tree_bits_.end(), time_bits(kIdle));
    std::fill(free_at_.begin(), free_at_.end(), 0.0);
    for (size_t i = tree_leaves_ - 1; i >= 1; --i) tree_[i] = tree_[2 * i];  // leftmost leaves
    for (int d = 0; d < num_dev_; ++d) {
      lazy_head_[d] = lazy_tail_[d] = -1;
    }
    num_lazy_ = 0;
    if (++stamp_ == 0) {  // wrapped: no slot may look stamped by this simulation
      std::fill(slot_stamp_.begin(), slot_stamp_.end(), 0);
      stamp_ = 1;
    }
    num_run_ = 0;
    std::copy(in_degree_.begin(), in_degree_.end(), remaining_.begin());
    std::fill(ready_key_.begin(), ready_key_.end(), Key{0});
    seq_ = 0;
    if (heaps_dirty_) {  // an earlier simulation stopped early (a cycle): empty the heaps
      std::fill(heap_.begin(), heap_.end(), kNoKey);
      for (int d = 0; d < num_dev_; ++d) heap_[d * heap_stride_] = 0;
      std::fill(heap_size_.begin(), heap_size_.end(), 0);
    }
    heaps_dirty_ = true;
    memory_on_ = compute_memory_ || cluster_.has_memory_limits();
    if (memory_on_) peak_memory_->begin();

    // Sources are queued at init_offset in file order, before any release (none can happen
    // earlier, and those at init_offset are made then, so they carry the flag).
    const uint64_t init_hi = time_bits(k.init_offset_us);
    for (NodeId v : sources_) {
      const Key key = (static_cast<Key>(init_hi) << 64) | (static_cast<uint64_t>(v) << 32) |
                      static_cast<uint32_t>(rank_[v]);
      dev_push(dev_of_[v], key);
      schedule_device(dev_of_[v], k.init_offset_us);
    }

    now = 0;
    for (;;) {
      // The next resource event: earliest time, then lowest index (buses before devices).
      const int j = tree_[1];
      const double t = bits_time(tree_bits_[1]);
      if (t == kIdle) break;
      now = t;
      if (j >= num_dev_)
        run_device(j - num_dev_, now, trace);
      else
        run_bus(j, now);
    }
    if (!exact) clash_score_ = clash_ ? clash_score_ + 4 : std::max(0, clash_score_ - 1);
    if (!clash_ || num_run_ != n) break;
  }
  if (num_run_ == n) heaps_dirty_ = false;  // all popped
  if (num_run_ != n) {
    // An op that never ran was never queued: some in-edge was never released.
    for (NodeId v = 0; v < n; ++v)
      if (remaining_[v] != 0)
        throw InputError("graph '" + g.name() + "': op '" + g.node_name(v) +
                         "' never runs (the graph has a cycle)");
  }
  // The reference also processes a run event when a resource's gap ends with its queue empty
  // (it goes idle) or its head not ready (put back); those change nothing else, so they are
  // not simulated, but their times count: the last event is the latest end of a gap.
  for (double f : free_at_) now = std::max(now, f);
  result_.runtime_us = now;
  // Transfers were recorded when created; list them in the order they start.
  if (trace)
    std::stable_sort(trace->transfers.begin(), trace->transfers.end(),
                     [](const auto& a, const auto& b) { return a.start_us < b.start_us; });
  if (memory_on_) {
    peak_memory_->finish(p, start_, &result_.peak_mem_bytes);
    // finish_memory_result(), over the ops that have parameters only.
    std::fill(result_.param_bytes.begin(), result_.param_bytes.end(), 0);
    for (NodeId v : param_ops_) result_.param_bytes[dev_of_[v]] += g.param_bytes(v);
    check_capacity(cluster_, &result_);
  }
  return result_;
}

void finish_memory_result(const Graph& g, const Cluster& c, const Placement& p, SimResult* r) {
  std::fill(r->param_bytes.begin(), r->param_bytes.end(), 0);
  for (NodeId v = 0; v < g.num_nodes(); ++v) r->param_bytes[p.device[v]] += g.param_bytes(v);
  check_capacity(c, r);
}

}  // namespace placeto
