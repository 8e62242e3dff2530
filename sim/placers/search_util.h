// What the searching placers share: the score they minimise, their start placement, and
// budgets sized to a time (descent's; anneal and the learned search cool by the time spent
// instead).  Public: the learned search (improve/) and every search in sim/placers/ use them.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "sim/placers/memory_rule.h"
#include "sim/placers/placer.h"
#include "sim/simulator.h"

namespace placeto {

// The memory rule's scalar (memory_rule.h): the step of a placement that fits; above every
// such step, and growing with the overflow, for one that does not.  Lower is better; compare
// two with score_improves().
double search_score(const SimResult& r, const Cluster& c);

// options.initial, or else the best fast placement by the memory rule (a feasible one whenever
// a fast placer found one) (registry.h best_fast_placement), checked
// against the graph and cluster; InputError naming `method` otherwise.  A search given a time
// (options.time_ms) on a graph above kTimedStartSkipOps ops leaves m-etf out of its start:
// its list scheduling grows with the square of a wide graph (70 s at 50k ops, where T is
// typically a minute); options.stats->note says so.
// Its fast placers' memory repairs also stop at kTimedStartRepairShare of time_ms
// (PlacerOptions::repair_deadline): on the 48-layer decoder (5.4k ops) `expert`'s repair took
// 2.9-5.3 s, and a search given 1 s returned after 3.2-6.2 s (experiments/RESULTS.md
// section 12).  When the start ran past that point, options.stats->note says so.
inline constexpr int kTimedStartSkipOps = 20000;
inline constexpr double kTimedStartRepairShare = 0.25;
Placement search_start(const Graph& g, const Cluster& c, const PlacerOptions& o,
                       const char* method);

// Appends `text` to stats->note ("; " between notes); nothing when stats is null.
void add_note(PlacerStats* stats, const std::string& text);
// A search's stats at its start: all zero but the note, which keeps what search_start said.
void reset_stats_keeping_note(PlacerStats* stats);

// Milliseconds of the steady clock since `t`: how every timed search reads its clock.
inline double ms_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
}

// The number of simulations that fit in what is left of `time_ms` since `t_call`, timed on
// single-op moves spread over `p` (restored afterwards): the median of rounds of 16 moves,
// for 2% of time_ms (at most 50 ms; at least 3 rounds).  At least 1.
int64_t budget_for_time(Simulator& sim, Placement& p, double time_ms,
                        std::chrono::steady_clock::time_point t_call);

}  // namespace placeto
