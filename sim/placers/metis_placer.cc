// k-way graph partitioning with METIS: vertex weight = compute cost, edge weight = tensor
// bytes, k = number of devices; the heaviest part goes to the fastest device.
#include <metis.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "common/error.h"
#include "sim/placers/memory.h"
#include "sim/placers/methods.h"

namespace placeto {
namespace {

// METIS takes 32-bit integer weights (Debian builds it with IDXTYPEWIDTH 32) whose sums must
// not overflow: scale so the total stays below 2^30 and every weight is at least 1.
std::vector<idx_t> scaled_weights(const std::vector<double>& w) {
  double total = 0, max_w = 0;
  for (double x : w) {
    total += x;
    max_w = std::max(max_w, x);
  }
  const double limit = static_cast<double>(1 << 30);
  const double scale = total > 0 ? std::min(1.0, limit / total) : 1.0;
  std::vector<idx_t> out(w.size());
  for (size_t i = 0; i < w.size(); ++i)
    out[i] = static_cast<idx_t>(std::max(1.0, std::round(w[i] * scale)));
  return out;
}

class MetisPlacer : public Placer {
 public:
  std::string name() const override { return "metis"; }
  Placement place(const Graph& g, const Cluster& c, const PlacerOptions& o) const override {
    const int n = g.num_nodes();
    const int num_dev = c.num_devices();
    Placement p(num_dev, n, 0);
    if (num_dev == 1 || n == 0) return p;
    std::vector<idx_t> part(n, 0);
    if (n <= num_dev) {
      std::iota(part.begin(), part.end(), 0);
    } else {
      partition(g, num_dev, o.seed, &part);
    }
    map_parts_to_devices(g, c, part, &p);
    repair_memory(g, c, &p, o.repair_deadline);
    return p;
  }

 private:
  static void partition(const Graph& g, int k, int64_t seed, std::vector<idx_t>* part) {
    const int n = g.num_nodes();
    // Undirected CSR: a DAG has at most one edge per unordered pair, so no duplicates.
    std::vector<idx_t> xadj(n + 1, 0), adjncy;
    std::vector<double> edge_w, vertex_w(n);
    adjncy.reserve(2 * g.num_edges());
    edge_w.reserve(2 * g.num_edges());
    const auto& ce = g.child_edges();
    const auto& pe = g.parent_edges();
    for (NodeId v = 0; v < n; ++v) {
      vertex_w[v] = g.cost_us(v);
      for (int i = g.child_begin(v); i < g.child_end(v); ++i) {
        adjncy.push_back(g.edge_dst(ce[i]));
        edge_w.push_back(static_cast<double>(g.edge_bytes(ce[i])));
      }
      for (int i = g.parent_begin(v); i < g.parent_end(v); ++i) {
        adjncy.push_back(g.edge_src(pe[i]));
        edge_w.push_back(static_cast<double>(g.edge_bytes(pe[i])));
      }
      xadj[v + 1] = static_cast<idx_t>(adjncy.size());
    }
    std::vector<idx_t> vwgt = scaled_weights(vertex_w), adjwgt = scaled_weights(edge_w);
    idx_t nvtxs = n, ncon = 1, nparts = k, objval = 0;
    idx_t options[METIS_NOPTIONS];
    METIS_SetDefaultOptions(options);
    options[METIS_OPTION_SEED] = static_cast<idx_t>(seed & 0x3fffffff);
    options[METIS_OPTION_NUMBERING] = 0;
    const int rc = METIS_PartGraphKway(&nvtxs, &ncon, xadj.data(), adjncy.data(), vwgt.data(),
                                       nullptr, adjncy.empty() ? nullptr : adjwgt.data(), &nparts,
                                       nullptr, nullptr, options, &objval, part->data());
    if (rc != METIS_OK)
      throw SystemError("METIS_PartGraphKway failed with code " + std::to_string(rc) +
                        " on graph '" + g.name() + "' (" + std::to_string(n) + " ops, " +
                        std::to_string(k) + " parts)");
  }

  // Heaviest part to the fastest device (ties: the larger capacity, then the lower index), so
  // that heterogeneous clusters get a sensible mapping (on identical devices any mapping is
  // equivalent up to renaming; this one is deterministic).
  static void map_parts_to_devices(const Graph& g, const Cluster& c, const std::vector<idx_t>& part,
                                   Placement* p) {
    const int k = c.num_devices();
    std::vector<double> weight(k, 0);
    for (NodeId v = 0; v < g.num_nodes(); ++v) weight[part[v]] += g.cost_us(v);
    std::vector<int> parts(k), devices(k), device_of_part(k);
    std::iota(parts.begin(), parts.end(), 0);
    std::iota(devices.begin(), devices.end(), 0);
    std::stable_sort(parts.begin(), parts.end(),
                     [&](int a, int b) { return weight[a] > weight[b]; });
    std::stable_sort(devices.begin(), devices.end(), [&](int a, int b) {
      const double ta = c.op_time_us(1000.0, a), tb = c.op_time_us(1000.0, b);
      if (ta != tb) return ta < tb;
      const double ma = c.devices[a].memory_bytes, mb = c.devices[b].memory_bytes;
      if (ma != mb) return ma == 0 || (mb != 0 && ma > mb);
      return false;
    });
    for (int i = 0; i < k; ++i) device_of_part[parts[i]] = devices[i];
    for (NodeId v = 0; v < g.num_nodes(); ++v) p->device[v] = device_of_part[part[v]];
  }
};

}  // namespace

std::unique_ptr<Placer> make_metis_placer() { return std::make_unique<MetisPlacer>(); }

}  // namespace placeto
