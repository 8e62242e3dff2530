// List schedulers that place while they schedule: HEFT (Topcuoglu et al. 2002, insertion
// policy) and Baechi's memory-constrained m-ETF and m-SCT (Jeon et al., SoCC 2020), all on
// ScheduleModel, i.e. on the simulator's cost view.  m-ETF and m-SCT return partition's
// placement (contiguous.h) when theirs does not fit and partition's is better by the memory
// rule, and say so in PlacerStats::note.
#include <algorithm>
#include <queue>

#include "common/error.h"
#include "sim/placers/contiguous.h"
#include "sim/placers/memory.h"
#include "sim/placers/methods.h"
#include "sim/placers/schedule_model.h"
#include "sim/simulator.h"

namespace placeto {
namespace {

// Ops whose parents are all scheduled.  Order of the list is irrelevant: selections below
// break every tie explicitly, so results do not depend on it.
class ReadyList {
 public:
  explicit ReadyList(const Graph& g) : g_(g), missing_(g.num_nodes()) {
    for (NodeId v = 0; v < g.num_nodes(); ++v) {
      missing_[v] = g.in_degree(v);
      if (missing_[v] == 0) ready_.push_back(v);
    }
  }
  const std::vector<NodeId>& ops() const { return ready_; }
  bool empty() const { return ready_.empty(); }
  void remove_and_release(NodeId v) {
    ready_.erase(std::find(ready_.begin(), ready_.end(), v));
    const auto& ce = g_.child_edges();
    for (int i = g_.child_begin(v); i < g_.child_end(v); ++i) {
      const NodeId w = g_.edge_dst(ce[i]);
      if (--missing_[w] == 0) ready_.push_back(w);
    }
  }

 private:
  const Graph& g_;
  std::vector<int> missing_;
  std::vector<NodeId> ready_;
};

// Finishes every list placer the same way: the ledger's estimate can be wrong in both
// directions, so the simulator checks the result and repair_memory() fixes what it can.
Placement finish(const Graph& g, const Cluster& c, const ScheduleModel& model,
                 const PlacerOptions& o) {
  Placement p = model.placement();
  repair_memory(g, c, &p, o.repair_deadline);
  return p;
}

class HeftPlacer : public Placer {
 public:
  std::string name() const override { return "heft"; }
  // Ops in decreasing upward rank (ties: topological position), each on the device that
  // finishes it earliest, inserted into the earliest gap that fits.  Devices whose capacity
  // the ledger says is spent are skipped; if none is left the roomiest one is used.
  Placement place(const Graph& g, const Cluster& c, const PlacerOptions& o) const override {
    const std::vector<double> rank = upward_rank(g, c);
    std::vector<int> topo_pos(g.num_nodes());
    for (size_t i = 0; i < g.topo_order().size(); ++i) topo_pos[g.topo_order()[i]] = i;
    auto lower_priority = [&](NodeId a, NodeId b) {
      if (rank[a] != rank[b]) return rank[a] < rank[b];
      return topo_pos[a] > topo_pos[b];
    };
    std::priority_queue<NodeId, std::vector<NodeId>, decltype(lower_priority)> queue(
        lower_priority);
    std::vector<int> missing(g.num_nodes());
    for (NodeId v = 0; v < g.num_nodes(); ++v)
      if ((missing[v] = g.in_degree(v)) == 0) queue.push(v);
    ScheduleModel model(g, c, /*insertion=*/true);
    MemoryLedger ledger(g, c);
    const auto& ce = g.child_edges();
    while (!queue.empty()) {
      const NodeId v = queue.top();
      queue.pop();
      int best = -1;
      double best_finish = 0;
      for (int d = 0; d < c.num_devices(); ++d) {
        if (!ledger.fits(v, d)) continue;
        const double f = model.earliest_start_us(v, d) + c.op_time_us(g.cost_us(v), d);
        if (best < 0 || f < best_finish) {
          best = d;
          best_finish = f;
        }
      }
      if (best < 0) best = ledger.roomiest_device();
      model.assign(v, best);
      ledger.add(v, best);
      for (int i = g.child_begin(v); i < g.child_end(v); ++i) {
        const NodeId w = g.edge_dst(ce[i]);
        if (--missing[w] == 0) queue.push(w);
      }
    }
    return finish(g, c, model, o);
  }
};

// The ETF loop shared by m-ETF and m-SCT: repeatedly schedule the (ready op, device) pair
// with the earliest start among the pairs `allowed` admits and the ledger fits (ties: higher
// upward rank, then topological position, then device index).  When no pair is admitted the
// loop retries without `allowed`, then places the highest-ranked op on the roomiest device.
template <typename Allowed>
Placement earliest_task_first(const Graph& g, const Cluster& c, const PlacerOptions& o,
                              ScheduleModel& model, Allowed allowed) {
  const std::vector<double> rank = upward_rank(g, c);
  std::vector<int> topo_pos(g.num_nodes());
  for (size_t i = 0; i < g.topo_order().size(); ++i) topo_pos[g.topo_order()[i]] = i;
  auto before = [&](NodeId a, NodeId b) {
    if (rank[a] != rank[b]) return rank[a] > rank[b];
    return topo_pos[a] < topo_pos[b];
  };
  MemoryLedger ledger(g, c);
  ReadyList ready(g);
  while (!ready.empty()) {
    NodeId best_v = -1;
    int best_d = -1;
    double best_start = 0;
    for (int pass = 0; pass < 2 && best_v < 0; ++pass) {
      for (NodeId v : ready.ops()) {
        for (int d = 0; d < c.num_devices(); ++d) {
          if (!ledger.fits(v, d) || (pass == 0 && !allowed(v, d))) continue;
          const double s = model.earliest_start_us(v, d);
          if (best_v < 0 || s < best_start ||
              (s == best_start && (before(v, best_v) || (v == best_v && d < best_d)))) {
            best_v = v;
            best_d = d;
            best_start = s;
          }
        }
      }
    }
    if (best_v < 0) {
      for (NodeId v : ready.ops())
        if (best_v < 0 || before(v, best_v)) best_v = v;
      best_d = ledger.roomiest_device();
    }
    model.assign(best_v, best_d);
    ledger.add(best_v, best_d);
    ready.remove_and_release(best_v);
  }
  return finish(g, c, model, o);
}

class MetfPlacer : public Placer {
 public:
  std::string name() const override { return "m-etf"; }
  Placement place(const Graph& g, const Cluster& c, const PlacerOptions& o) const override {
    ScheduleModel model(g, c, /*insertion=*/false);
    return fall_back_to_partition(
        g, c, earliest_task_first(g, c, o, model, [](NodeId, int) { return true; }), name(),
        o.stats);
  }
};

// m-SCT without the linear program: each op gets at most one favourite child and each op is
// the favourite of at most one parent, chosen greedily by decreasing transfer time (the
// edges the LP would most want to keep local).  While an op's favourite child is ready but
// not yet scheduled, the device the op ran on (if it is still the device's latest op) is
// reserved for that child: other ops may not start there.  Otherwise it is m-ETF.
class MsctPlacer : public Placer {
 public:
  std::string name() const override { return "m-sct"; }
  Placement place(const Graph& g, const Cluster& c, const PlacerOptions& o) const override {
    const std::vector<NodeId> favourite = favourite_children(g, c);
    ScheduleModel model(g, c, /*insertion=*/false);
    auto allowed = [&](NodeId v, int d) {
      const NodeId last = model.last_op(d);
      if (last < 0) return true;
      const NodeId fav = favourite[last];
      if (fav < 0 || fav == v || model.assigned(fav)) return true;
      // Only a ready favourite holds the device: one still waiting for other parents could
      // keep it idle for an unbounded time.
      const auto& pe = g.parent_edges();
      for (int i = g.parent_begin(fav); i < g.parent_end(fav); ++i)
        if (!model.assigned(g.edge_src(pe[i]))) return true;
      return false;
    };
    return fall_back_to_partition(g, c, earliest_task_first(g, c, o, model, allowed), name(),
                                  o.stats);
  }

 private:
  static std::vector<NodeId> favourite_children(const Graph& g, const Cluster& c) {
    std::vector<EdgeId> edges(g.num_edges());
    for (EdgeId e = 0; e < g.num_edges(); ++e) edges[e] = e;
    std::vector<double> comm(g.num_edges());
    for (EdgeId e = 0; e < g.num_edges(); ++e) comm[e] = mean_transfer_us(g, c, e);
    std::stable_sort(edges.begin(), edges.end(),
                     [&](EdgeId a, EdgeId b) { return comm[a] > comm[b]; });
    std::vector<NodeId> favourite(g.num_nodes(), -1);
    std::vector<char> taken(g.num_nodes(), 0);
    for (EdgeId e : edges) {
      const NodeId u = g.edge_src(e), w = g.edge_dst(e);
      if (favourite[u] >= 0 || taken[w]) continue;
      favourite[u] = w;
      taken[w] = 1;
    }
    return favourite;
  }
};

}  // namespace

std::unique_ptr<Placer> make_heft_placer() { return std::make_unique<HeftPlacer>(); }
std::unique_ptr<Placer> make_metf_placer() { return std::make_unique<MetfPlacer>(); }
std::unique_ptr<Placer> make_msct_placer() { return std::make_unique<MsctPlacer>(); }

}  // namespace placeto
