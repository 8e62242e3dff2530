// The one rule that compares placements of a graph when memory may not fit, and the scalar
// that orders placements exactly as the rule does.  Every comparison of placements uses it:
// the protocol's better_placement() (so `best`, `compare`, `eval` and the trainer's
// evaluation), search_score() (anneal, slack-anneal, descent, `auto`, the learned search, the
// scorer's labelling teacher and its RL reward).
//
// The rule, for two placements a and b of one graph on one cluster:
//  1. a placement that fits (SimResult::memory_ok) beats one that does not;
//  2. between two that do not fit, the smaller overflow wins: first the largest relative
//     overflow max_d (need_d - cap_d) / cap_d, then the total overflow, sum_d max(0, need_d -
//     cap_d), as a fraction of the cluster's total capacity;
//  3. then the shorter step.
// need_d is device d's simulated peak of live activations plus its resident parameters; only
// devices with a capacity count.  Both overflow measures are compared on a grid (the largest
// relative overflow to 2^-16 ~ 15 ppm of a device's capacity, saturating at 64x; the total to
// 2^-14 of the total capacity, saturating at 256x), and between two placements that do not fit
// the steps are compared to 11 significant bits (~0.05%), so that one double can carry all
// three (memory_rule_score).  Between two placements that fit the steps compare exactly.
//
// Threading: pure functions.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/cluster.h"
#include "sim/sim_result.h"

namespace placeto {

// How far a placement is over the cluster's capacities; all zero when it fits.
struct MemoryOverflow {
  double max_relative = 0;    // max over devices with a capacity of (need - cap) / cap, or 0
  double total_bytes = 0;     // sum over devices of max(0, need - cap)
  double total_relative = 0;  // total_bytes / the sum of the capacities
  bool fits() const { return !(max_relative > 0); }
};

// From per-device peak activations and resident parameters (a SimResult's or a
// PlacementEvaluation's).  A device over capacity here is exactly one the simulator marks
// over_capacity: the same double arithmetic (need > cap).
MemoryOverflow memory_overflow(const std::vector<int64_t>& peak_mem_bytes,
                               const std::vector<int64_t>& param_bytes, const Cluster& cluster);
inline MemoryOverflow memory_overflow(const SimResult& r, const Cluster& cluster) {
  return memory_overflow(r.peak_mem_bytes, r.param_bytes, cluster);
}

// The rule: true when (a, step_a) is strictly better than (b, step_b).
bool better_under_memory_rule(const MemoryOverflow& a, double step_a_us, const MemoryOverflow& b,
                              double step_b_us);

// A scalar that orders placements exactly as the rule: score(a) < score(b) iff a is better,
// equal iff neither is.  A placement that fits scores its step (for steps below 2^50 us,
// ~35 years; longer ones score just below 2^50).  One that does not scores above 2^50: the
// positive double whose bit pattern is that of 2^50 plus one plus the rule's key
// (largest-overflow grid step, total-overflow grid step, step to 11 bits) packed
// lexicographically into 61 bits; positive doubles order as their bit patterns, so the order
// is exact, and the score grows roughly exponentially in the overflow (a search's relative
// temperature sees overflow as it sees time).
double memory_rule_score(const MemoryOverflow& overflow, double step_us);

// What a search counts as a strict improvement of `than` by `score` (scores of
// memory_rule_score): below by more than one part in 10^12 between steps of placements that
// fit (so that equal schedules summed in another order do not count), strictly below
// otherwise (the infeasible scores are exact grid values).
bool score_improves(double score, double than);

}  // namespace placeto
