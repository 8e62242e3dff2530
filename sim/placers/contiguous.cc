#include "sim/placers/contiguous.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "common/error.h"
#include "sim/coarsen.h"
#include "sim/placers/memory.h"
#include "sim/placers/memory_rule.h"
#include "sim/simulator.h"

namespace placeto {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

}  // namespace

OpSequence training_op_sequence(const Graph& g) {
  const std::vector<int32_t> group = training_op_groups(g);
  std::vector<int32_t> item_of_group(
      group.empty() ? 0 : *std::max_element(group.begin(), group.end()) + 1, -1);
  OpSequence seq;
  seq.item_of.assign(g.num_nodes(), -1);
  for (NodeId v : g.topo_order()) {
    int32_t& item = item_of_group[group[v]];
    if (item < 0) {
      item = seq.size();
      seq.items.emplace_back();
    }
    seq.items[item].push_back(v);
    seq.item_of[v] = item;
  }
  return seq;
}

ItemMemory::ItemMemory(const Graph& g, const Cluster& c, const OpSequence& seq) : g_(g), seq_(seq) {
  const int n = g.num_nodes();
  live_lo_.assign(n, -1);
  live_hi_.assign(n, -1);
  if (n == 0) return;
  Simulator sim(g, c);
  sim.set_compute_memory(false);
  sim.simulate(Placement(c.num_devices(), n, 0));
  const std::vector<double>& start = sim.start_us();
  const std::vector<double>& end = sim.end_us();
  std::vector<double> times(start.begin(), start.end());
  std::sort(times.begin(), times.end());
  times.erase(std::unique(times.begin(), times.end()), times.end());
  slots_ = static_cast<int>(times.size());
  const auto& ce = g.child_edges();
  for (NodeId v = 0; v < n; ++v) {
    if (g.total_out_bytes(v) <= 0) continue;
    double last_use = start[v];
    for (int i = g.child_begin(v); i < g.child_end(v); ++i) {
      const NodeId w = g.edge_dst(ce[i]);
      last_use = std::max(last_use, std::floor(start[w]) + std::floor(end[w] - start[w]) - 1.0);
    }
    live_lo_[v] = static_cast<int32_t>(std::lower_bound(times.begin(), times.end(), start[v]) -
                                       times.begin());
    live_hi_[v] = static_cast<int32_t>(std::upper_bound(times.begin(), times.end(), last_use) -
                                       times.begin()) -
                  1;
    live_hi_[v] = std::max(live_hi_[v], live_lo_[v]);
  }
  max_.assign(4 * static_cast<size_t>(slots_), 0);
  add_.assign(4 * static_cast<size_t>(slots_), 0);
}

void ItemMemory::range_add(int lo, int hi, int64_t x, int node, int node_lo, int node_hi) {
  if (hi < node_lo || node_hi < lo) return;
  if (lo <= node_lo && node_hi <= hi) {
    max_[node] += x;
    add_[node] += x;
    return;
  }
  const int mid = (node_lo + node_hi) / 2;
  range_add(lo, hi, x, 2 * node, node_lo, mid);
  range_add(lo, hi, x, 2 * node + 1, mid + 1, node_hi);
  max_[node] = add_[node] + std::max(max_[2 * node], max_[2 * node + 1]);
}

void ItemMemory::change(int item, int sign) {
  for (NodeId v : seq_.items[item]) {
    params_ += sign * g_.param_bytes(v);
    if (live_lo_[v] >= 0)
      range_add(live_lo_[v], live_hi_[v], sign * g_.total_out_bytes(v), 1, 0, slots_ - 1);
  }
}

int64_t ItemMemory::need_bytes() const { return (slots_ > 0 ? max_[1] : 0) + params_; }

int64_t ItemMemory::need_with(int item) {
  add(item);
  const int64_t need = need_bytes();
  remove(item);
  return need;
}

namespace {

// The split problem of contiguous_partition: per device, the estimated time of every prefix
// of the sequence, and per boundary the estimated transfers across it.
class SplitProblem {
 public:
  SplitProblem(const Graph& g, const Cluster& c)
      : g_(g), seq_(training_op_sequence(g)), empty_(g, c, seq_), num_dev_(c.num_devices()) {
    const int k = seq_.size();
    prefix_.assign(num_dev_, std::vector<double>(k + 1, 0.0));
    for (int d = 0; d < num_dev_; ++d)
      for (int i = 0; i < k; ++i) {
        double t = 0;
        for (NodeId v : seq_.items[i])
          t += c.op_time_us(g.cost_us(v), d) + c.op_gap_us(g.cost_us(v));
        prefix_[d][i + 1] = prefix_[d][i] + t;
      }
    // A tensor crosses boundary b (between items b - 1 and b) when its producer and consumers
    // lie on both sides; it is counted once, as the simulator sends it once per device.
    cut_.assign(k + 2, 0.0);
    const auto& ce = g.child_edges();
    for (NodeId u = 0; u < g.num_nodes() && num_dev_ > 1; ++u)
      for (int out = 0; out < g.num_outputs(u); ++out) {
        int lo = seq_.item_of[u], hi = lo;
        for (int i = g.child_begin(u); i < g.child_end(u); ++i) {
          if (g.edge_out(ce[i]) != out) continue;
          const int w = seq_.item_of[g.edge_dst(ce[i])];
          lo = std::min(lo, w);
          hi = std::max(hi, w);
        }
        if (lo == hi) continue;
        const double t = c.transfer_busy_us(g.out_bytes(u, out), 0, 1);
        cut_[lo + 1] += t;
        cut_[hi + 1] -= t;
      }
    for (int b = 1; b <= k + 1; ++b) cut_[b] += cut_[b - 1];
  }

  const OpSequence& sequence() const { return seq_; }

  // The cheapest split under `cap` (per device, by the estimate), as a device per item;
  // nullopt when none fits.  Devices take consecutive blocks in index order; a block may be
  // empty.  Cost: the blocks' compute plus the transfers at every boundary between blocks.
  std::optional<std::vector<int32_t>> best_split(const std::vector<double>& cap) const {
    const int k = seq_.size();
    // first[d][b]: the earliest start of a block ending at b that fits device d.
    std::vector<std::vector<int>> first(num_dev_, std::vector<int>(k + 1, 0));
    for (int d = 0; d < num_dev_; ++d) {
      if (cap[d] == kInf) continue;
      ItemMemory mem = empty_;
      int a = 0;
      for (int b = 1; b <= k; ++b) {
        mem.add(b - 1);
        while (a<b&& static_cast<double>(mem.need_bytes())> cap[d]) mem.remove(a++);
        first[d][b] = a;
      }
    }
    std::vector<std::vector<double>> cost(num_dev_ + 1, std::vector<double>(k + 1, kInf));
    std::vector<std::vector<int>> from(num_dev_ + 1, std::vector<int>(k + 1, -1));
    cost[0][0] = 0;
    for (int d = 1; d <= num_dev_; ++d) {
      const std::vector<double>& p = prefix_[d - 1];
      for (int b = 0; b <= k; ++b) {
        cost[d][b] = cost[d - 1][b];  // device d - 1 left empty
        from[d][b] = -1;
        for (int a = first[d - 1][b]; a < b; ++a) {
          if (cost[d - 1][a] == kInf) continue;
          const double x = cost[d - 1][a] + (p[b] - p[a]) + (a > 0 ? cut_[a] : 0.0);
          if (x < cost[d][b]) {
            cost[d][b] = x;
            from[d][b] = a;
          }
        }
      }
    }
    if (cost[num_dev_][k] == kInf) return std::nullopt;
    std::vector<int32_t> device(k, 0);
    for (int d = num_dev_, b = k; d > 0; --d) {
      const int a = from[d][b];
      if (a < 0) continue;
      for (int i = a; i < b; ++i) device[i] = d - 1;
      b = a;
    }
    return device;
  }

  // Whether some split fits `cap` by the estimate: the greedy one that fills each device in
  // turn (the needs are monotone in the set, so greedy blocks are as long as any).
  bool any_split_fits(const std::vector<double>& cap) const {
    ItemMemory mem = empty_;
    int d = 0, block_start = 0;
    for (int i = 0; i < seq_.size(); ++i) {
      while (d<num_dev_&& static_cast<double>(mem.need_with(i))> cap[d]) {
        for (int j = block_start; j < i; ++j) mem.remove(j);
        block_start = i;
        ++d;
      }
      if (d == num_dev_) return false;
      mem.add(i);
    }
    return true;
  }

  Placement placement(const std::vector<int32_t>& item_device) const {
    Placement p(num_dev_, g_.num_nodes(), 0);
    for (int i = 0; i < seq_.size(); ++i)
      for (NodeId v : seq_.items[i]) p.device[v] = item_device[i];
    return p;
  }

 private:
  const Graph& g_;
  OpSequence seq_;
  ItemMemory empty_;  // the timeline, simulated once; copied for every set
  int num_dev_;
  std::vector<std::vector<double>> prefix_;  // per device, per item count
  std::vector<double> cut_;                  // per boundary
};

// The smallest factor s >= 1 such that some split fits s x `cap` by the estimate (to 0.1%).
double least_fitting_factor(const SplitProblem& problem, const std::vector<double>& cap) {
  auto scaled = [&](double s) {
    std::vector<double> x = cap;
    for (double& v : x) v *= s;
    return x;
  };
  double lo = 1, hi = 2;
  while (!problem.any_split_fits(scaled(hi))) {
    lo = hi;
    hi *= 2;
    PLACETO_CHECK_LT(hi, 1e30);  // every item fits some device at a large enough factor
  }
  while (hi > lo * 1.001) {
    const double mid = std::sqrt(lo * hi);
    (problem.any_split_fits(scaled(mid)) ? hi : lo) = mid;
  }
  return hi;
}

}  // namespace

// The simulator has the final word on a split: each round tries moving every boundary between
// two blocks by 1, 2, 4, ... items either way and takes the move that is best by the memory
// rule, until none improves or `max_simulations` are spent.
std::vector<int32_t> polish_boundaries(const SplitProblem& problem, const Cluster& c,
                                       Simulator& sim, std::vector<int32_t> split,
                                       int max_simulations) {
  const int k = static_cast<int>(split.size());
  const int num_dev = c.num_devices();
  // end[d]: one past the last item of device d (blocks are [end[d - 1], end[d])).
  std::vector<int> end(num_dev, 0);
  for (int i = 0; i < k; ++i) end[split[i]] = i + 1;
  for (int d = 1; d < num_dev; ++d) end[d] = std::max(end[d], end[d - 1]);
  auto split_of = [&](const std::vector<int>& e) {
    std::vector<int32_t> out(k);
    for (int d = 0, i = 0; d < num_dev; ++d)
      for (; i < e[d]; ++i) out[i] = d;
    return out;
  };
  const SimResult& r0 = sim.simulate(problem.placement(split));
  MemoryOverflow best_o = memory_overflow(r0, c);
  double best_step = r0.runtime_us;
  for (int spent = 0; spent < max_simulations;) {
    std::vector<int> best_end;
    for (int d = 0; d + 1 < num_dev && spent < max_simulations; ++d)
      for (int step = 1; step < k && spent < max_simulations; step *= 2)
        for (int sign : {-1, 1}) {
          std::vector<int> e = end;
          e[d] += sign * step;
          if (e[d] < (d ? end[d - 1] : 0) || e[d] > end[d + 1]) continue;
          const SimResult& r = sim.simulate(problem.placement(split_of(e)));
          ++spent;
          const MemoryOverflow o = memory_overflow(r, c);
          if (better_under_memory_rule(o, r.runtime_us, best_o, best_step)) {
            best_o = o;
            best_step = r.runtime_us;
            best_end = e;
          }
        }
    if (best_end.empty()) break;
    end = best_end;
  }
  return split_of(end);
}

Placement contiguous_partition(const Graph& g, const Cluster& c) {
  const int num_dev = c.num_devices();
  if (g.num_nodes() == 0 || num_dev == 1) return Placement(num_dev, g.num_nodes(), 0);
  const SplitProblem problem(g, c);
  std::vector<double> cap(num_dev);
  for (int d = 0; d < num_dev; ++d) cap[d] = device_capacity_bytes(c, d);
  Simulator sim(g, c);
  std::optional<Placement> best;
  MemoryOverflow best_overflow;
  double best_step = 0;
  constexpr int kAttempts = 3;
  constexpr int kPolishSimulations = 200;
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    std::optional<std::vector<int32_t>> split = problem.best_split(cap);
    const bool estimated_fit = split.has_value();
    if (!estimated_fit) {
      const double s = least_fitting_factor(problem, cap);
      std::vector<double> scaled = cap;
      for (double& v : scaled) v *= s;
      split = problem.best_split(scaled);
      PLACETO_CHECK(split.has_value());
    }
    split = polish_boundaries(problem, c, sim, *split, kPolishSimulations);
    Placement p = problem.placement(*split);
    const SimResult& r = sim.simulate(p);
    const MemoryOverflow o = memory_overflow(r, c);
    if (!best || better_under_memory_rule(o, r.runtime_us, best_overflow, best_step)) {
      best = p;
      best_overflow = o;
      best_step = r.runtime_us;
    }
    if (r.memory_ok || !estimated_fit) break;
    // The estimate was low where the simulator found an overflow: ask for that much less.
    for (int d = 0; d < num_dev; ++d)
      if (r.over_capacity[d])
        cap[d] *= 0.99 * c.devices[d].memory_bytes /
                  static_cast<double>(r.peak_mem_bytes[d] + r.param_bytes[d]);
  }
  return *best;
}

Placement fall_back_to_partition(const Graph& g, const Cluster& c, Placement own,
                                 const std::string& method, PlacerStats* stats) {
  if (!c.has_memory_limits()) return own;
  Simulator sim(g, c);
  const SimResult& r = sim.simulate(own);
  if (r.memory_ok) return own;
  const MemoryOverflow own_overflow = memory_overflow(r, c);
  const double own_step = r.runtime_us;
  Placement part = contiguous_partition(g, c);
  const SimResult& rp = sim.simulate(part);
  if (!better_under_memory_rule(memory_overflow(rp, c), rp.runtime_us, own_overflow, own_step))
    return own;
  if (stats)
    stats->note = "fell back to partition: " + method + "'s own placement does not fit" +
                  (rp.memory_ok ? "" : " (nor does partition's, which overflows less)");
  return part;
}

}  // namespace placeto
