#include "launch/local_search.h"

#include <cmath>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "sim/simulator.h"

namespace placeto {
namespace {

// The forward op a node belongs to: its name without a trailing "/grad", "/update" or
// "/grad_sum".
std::string owner_name(const std::string& name) {
  for (const char* suffix : {"/grad", "/update", "/grad_sum"}) {
    const std::string s(suffix);
    if (name.size() > s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0)
      return name.substr(0, name.size() - s.size());
  }
  return name;
}

}  // namespace

LocalSearchResult anneal_placement(const Graph& g, const Cluster& c, const LocalSearchOptions& opt,
                                   const Placement* start, const std::vector<int32_t>* tied) {
  const int n = g.num_nodes();
  const int d = c.num_devices();
  // Groups of a forward op and its training ops.
  std::unordered_map<std::string, int> group_of_name;
  std::vector<int> group(n);
  std::vector<std::vector<NodeId>> members;
  for (NodeId v = 0; v < n; ++v) {
    const std::string key = tied ? std::to_string((*tied)[v]) : owner_name(g.node_name(v));
    auto [it, fresh] = group_of_name.emplace(key, static_cast<int>(members.size()));
    if (fresh) members.emplace_back();
    group[v] = it->second;
    members[it->second].push_back(v);
  }
  Simulator sim(g, c);
  LocalSearchResult r;
  Placement single(d, n, 0);
  r.single_device_us = sim.simulate(single).runtime_us;
  r.best = start ? *start : single;
  r.best_runtime_us = sim.simulate(r.best).runtime_us;
  r.simulations = 2;
  if (d == 1) return r;
  std::mt19937_64 rng(opt.seed);
  std::vector<std::pair<NodeId, int32_t>> undo;
  for (int restart = 0; restart < opt.restarts; ++restart) {
    Placement cur = r.best;
    double cur_t = r.best_runtime_us;
    for (int it = 0; it < opt.iterations; ++it) {
      const double frac = static_cast<double>(it) / opt.iterations;
      const double temp = cur_t * opt.start_temperature *
                          std::pow(opt.end_temperature / opt.start_temperature, frac);
      const NodeId v = static_cast<NodeId>(rng() % n);
      int32_t to = static_cast<int32_t>(rng() % (d - 1));
      if (to >= cur.device[v]) ++to;
      undo.clear();
      if (!tied && rng() % 2 == 0) {
        undo.push_back({v, cur.device[v]});
        cur.device[v] = to;
      } else {
        for (NodeId u : members[group[v]]) {
          undo.push_back({u, cur.device[u]});
          cur.device[u] = to;
        }
      }
      const double t = sim.simulate(cur).runtime_us;
      ++r.simulations;
      const double u01 = static_cast<double>(rng() >> 11) * 0x1.0p-53;
      if (t <= cur_t || u01 < std::exp((cur_t - t) / temp)) {
        cur_t = t;
        if (t < r.best_runtime_us) {
          r.best_runtime_us = t;
          r.best = cur;
        }
      } else {
        for (auto it2 = undo.rbegin(); it2 != undo.rend(); ++it2)
          cur.device[it2->first] = it2->second;
      }
    }
  }
  return r;
}

}  // namespace placeto
