// The memory rule (sim/placers/memory_rule.h): its scalar orders placements exactly as the
// rule does, and its overflow is the simulator's over-capacity.
#include "sim/placers/memory_rule.h"

#include <gtest/gtest.h>

#include <cmath>

#include "common/rng.h"

namespace placeto {
namespace {

// Draws from a few values, so that ties in each field of the rule are common.
MemoryOverflow draw_overflow(Rng& rng) {
  static const double kRelative[] = {0.0, 1e-7, 1e-3, 0.05, 0.05 + 1e-6, 0.5, 3.0, 100.0};
  MemoryOverflow o;
  o.max_relative = kRelative[rng.below(8)];
  if (o.max_relative > 0) {
    o.total_relative = o.max_relative * (0.25 + 0.25 * static_cast<double>(rng.below(4)));
    o.total_bytes = o.total_relative * 8e9;
  }
  return o;
}

double draw_step(Rng& rng) {
  static const double kStep[] = {0.5, 1.0, 999.0, 1000.0, 1000.5, 2e6, 2.0001e6, 3e9};
  return kStep[rng.below(8)];
}

TEST(MemoryRule, ScoreOrdersPlacementsExactlyAsTheRule) {
  Rng rng(33);
  int feasible_vs_not = 0, both_over = 0, ties = 0;
  for (int k = 0; k < 200000; ++k) {
    const MemoryOverflow a = draw_overflow(rng), b = draw_overflow(rng);
    const double sa = draw_step(rng), sb = draw_step(rng);
    const double score_a = memory_rule_score(a, sa), score_b = memory_rule_score(b, sb);
    const bool a_better = better_under_memory_rule(a, sa, b, sb);
    const bool b_better = better_under_memory_rule(b, sb, a, sa);
    ASSERT_FALSE(a_better && b_better);
    ASSERT_EQ(score_a < score_b, a_better) << k;
    ASSERT_EQ(score_b < score_a, b_better) << k;
    ASSERT_TRUE(std::isfinite(score_a));
    feasible_vs_not += a.fits() != b.fits();
    both_over += !a.fits() && !b.fits();
    ties += !a_better && !b_better;
  }
  // The draws exercised every branch of the rule.
  EXPECT_GT(feasible_vs_not, 10000);
  EXPECT_GT(both_over, 10000);
  EXPECT_GT(ties, 1000);
}

TEST(MemoryRule, FitsFirstThenSmallerOverflowThenShorterStep) {
  MemoryOverflow fits, small, large;
  small.max_relative = 0.1;
  small.total_relative = 0.05;
  large.max_relative = 0.2;
  large.total_relative = 0.01;
  EXPECT_TRUE(better_under_memory_rule(fits, 1e9, small, 1.0));
  EXPECT_TRUE(better_under_memory_rule(small, 1e9, large, 1.0));  // largest overflow first
  MemoryOverflow small_more_total = small;
  small_more_total.total_relative = 0.08;
  EXPECT_TRUE(better_under_memory_rule(small, 1e9, small_more_total, 1.0));
  EXPECT_TRUE(better_under_memory_rule(small, 1.0, small, 2.0));
  EXPECT_TRUE(better_under_memory_rule(fits, 1.0, fits, 2.0));
  // Every placement that fits scores below every one that does not.
  EXPECT_LT(memory_rule_score(fits, 1e15), memory_rule_score(small, 0.0));
  EXPECT_TRUE(score_improves(memory_rule_score(fits, 5e15), memory_rule_score(small, 1.0)));
  EXPECT_FALSE(score_improves(memory_rule_score(fits, 1.0), memory_rule_score(fits, 1.0)));
}

TEST(MemoryRule, OverflowIsTheSimulatorsOverCapacity) {
  Cluster c = default_cluster(3);
  c.devices[0].memory_bytes = 1000;
  c.devices[1].memory_bytes = 2000;  // device 2 unlimited
  const MemoryOverflow o = memory_overflow({900, 2400, int64_t{1} << 40}, {200, 0, 0}, c);
  EXPECT_DOUBLE_EQ(o.max_relative, 0.2);  // device 1: 400 over 2000; device 0: 100 over 1000
  EXPECT_DOUBLE_EQ(o.total_bytes, 500);
  EXPECT_DOUBLE_EQ(o.total_relative, 500.0 / 3000.0);
  EXPECT_TRUE(memory_overflow({1000, 2000, 5}, {0, 0, 0}, c).fits());  // at capacity fits
}

}  // namespace
}  // namespace placeto
