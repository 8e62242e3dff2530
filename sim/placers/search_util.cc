#include "sim/placers/search_util.h"

#include <algorithm>
#include <string>
#include <vector>

#include "common/error.h"
#include "sim/placers/memory_rule.h"
#include "sim/placers/registry.h"

namespace placeto {

double search_score(const SimResult& r, const Cluster& c) {
  return memory_rule_score(memory_overflow(r, c), r.runtime_us);
}

void add_note(PlacerStats* stats, const std::string& text) {
  if (!stats || text.empty()) return;
  stats->note += (stats->note.empty() ? "" : "; ") + text;
}

void reset_stats_keeping_note(PlacerStats* stats) {
  if (!stats) return;
  PlacerStats fresh;
  fresh.note = std::move(stats->note);
  *stats = std::move(fresh);
}

Placement search_start(const Graph& g, const Cluster& c, const PlacerOptions& o,
                       const char* method) {
  const int n = g.num_nodes();
  const bool timed = !o.initial && o.time_ms > 0;
  const bool skip = timed && n > kTimedStartSkipOps;
  Placement p;
  if (o.initial) {
    p = *o.initial;
  } else {
    // A timed start's fast placers stop their memory repairs at kTimedStartRepairShare of T.
    PlacerOptions fast = o;
    if (timed && !fast.repair_deadline)
      fast.repair_deadline =
          std::chrono::steady_clock::now() +
          std::chrono::duration_cast<std::chrono::steady_clock::duration>(
              std::chrono::duration<double, std::milli>(kTimedStartRepairShare * o.time_ms));
    p = best_fast_placement(g, c, fast,
                            skip ? std::vector<std::string>{"m-etf"} : std::vector<std::string>{});
    if (timed && std::chrono::steady_clock::now() >= *fast.repair_deadline)
      add_note(o.stats, "start's fast placers ran past " +
                            std::to_string(static_cast<int>(kTimedStartRepairShare * 100 + 0.5)) +
                            "% of the time (their memory repairs stop there)");
  }
  if (skip) add_note(o.stats, "start without m-etf (" + std::to_string(n) + " ops, timed)");
  if (p.num_devices != c.num_devices() || static_cast<int>(p.device.size()) != n)
    throw InputError(std::string(method) + ": the initial placement is for " +
                     std::to_string(p.num_devices) + " devices and " +
                     std::to_string(p.device.size()) + " ops, but graph '" + g.name() + "' has " +
                     std::to_string(n) + " ops and the cluster " + std::to_string(c.num_devices()) +
                     " devices");
  validate_placement(g, p, std::string(method) + " initial placement");
  return p;
}

int64_t budget_for_time(Simulator& sim, Placement& p, double time_ms,
                        std::chrono::steady_clock::time_point t_call) {
  // Rounds of kProbes single-op moves, spread over the graph, until kMinRounds rounds and
  // 2% of time_ms (at most 50 ms) are spent; the cost of a simulation is the median round's.
  // One round of 32 moves lasted well under a millisecond on the zoo's graphs, so one
  // interruption could make it look several times slower and leave most of T unused.
  constexpr int kProbes = 16;
  constexpr int kMinRounds = 3;
  constexpr int kMaxRounds = 256;
  using Ms = std::chrono::duration<double, std::milli>;
  const int n = static_cast<int>(p.device.size());
  if (n == 0) return 1;
  const double probe_ms = std::min(50.0, 0.02 * time_ms);
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<double> per_sim_ms;
  for (int round = 0; round < kMaxRounds; ++round) {
    const auto r0 = std::chrono::steady_clock::now();
    for (int k = 0; k < kProbes; ++k) {
      const int v = static_cast<int>((static_cast<int64_t>(k) * n / kProbes + round) % n);
      const int32_t old = p.device[v];
      p.device[v] = (old + 1) % p.num_devices;
      sim.simulate(p);
      p.device[v] = old;
    }
    const auto r1 = std::chrono::steady_clock::now();
    per_sim_ms.push_back(Ms(r1 - r0).count() / kProbes);
    if (round + 1 >= kMinRounds && Ms(r1 - t0).count() >= probe_ms) break;
  }
  std::nth_element(per_sim_ms.begin(), per_sim_ms.begin() + per_sim_ms.size() / 2,
                   per_sim_ms.end());
  const double per_sim = per_sim_ms[per_sim_ms.size() / 2];
  const double left_ms = time_ms - ms_since(t_call);
  if (!(left_ms > 0) || !(per_sim > 0)) return 1;
  return std::max<int64_t>(1, static_cast<int64_t>(left_ms / per_sim));
}

}  // namespace placeto
