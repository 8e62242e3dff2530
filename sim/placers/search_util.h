// What the searching placers share: the score they minimise, their start placement, and
// budgets sized to a time.  Public: the learned search (improve/) and every search in
// sim/placers/ (anneal, slack-anneal, descent) use the same three.
#pragma once

#include <chrono>
#include <cstdint>

#include "sim/placers/placer.h"
#include "sim/simulator.h"

namespace placeto {

// Runtime, inflated by the relative overflow of every device over its capacity: an
// infeasible placement must look worse than any feasible one near it.
double search_score(const SimResult& r, const Cluster& c);

// options.initial, or else the best fast placement (registry.h best_fast_placement), checked
// against the graph and cluster; InputError naming `method` otherwise.
Placement search_start(const Graph& g, const Cluster& c, const PlacerOptions& o,
                       const char* method);

// The number of simulations that fit in what is left of `time_ms` since `t_call`, timed on
// 32 single-op moves spread over `p` (restored afterwards).  At least 1.
int64_t budget_for_time(Simulator& sim, Placement& p, double time_ms,
                        std::chrono::steady_clock::time_point t_call);

}  // namespace placeto
