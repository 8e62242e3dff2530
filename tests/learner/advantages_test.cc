// Advantages of a batch: leave-one-out baselines, normalisation, gradient cosine (no torch).
#include "training/advantages.h"

#include <gtest/gtest.h>

#include <cmath>

namespace placeto {
namespace {

TEST(Advantages, LeaveOneOutSubtractsTheOtherEpisodesMean) {
  const Returns g = {{3, 1}, {1, 0}, {2, 5}};
  const Returns a = leave_one_out_advantages(g);
  EXPECT_DOUBLE_EQ(a[0][0], 3 - (1 + 2) / 2.0);
  EXPECT_DOUBLE_EQ(a[1][0], 1 - (3 + 2) / 2.0);
  EXPECT_DOUBLE_EQ(a[2][1], 5 - (1 + 0) / 2.0);
  for (int t = 0; t < 2; ++t) EXPECT_NEAR(a[0][t] + a[1][t] + a[2][t], 0, 1e-12);
  // Equal returns: nothing to learn, zero advantages.
  for (const auto& row : leave_one_out_advantages({{4, 2}, {4, 2}}))
    for (double x : row) EXPECT_EQ(x, 0);
}

// The advantages used to be divided by their standard deviation without subtracting their
// mean, so a batch whose returns were all below the baseline pushed every action down.
TEST(Advantages, NormalisationCentresAndScales) {
  Returns a = {{-3, -2}, {-1, -6}};
  const MeanSd before = advantage_stats(a);
  EXPECT_DOUBLE_EQ(before.mean, -3);
  EXPECT_DOUBLE_EQ(before.sd, std::sqrt((0 + 1 + 4 + 9) / 4.0));
  normalize_advantages(&a);
  const MeanSd after = advantage_stats(a);
  EXPECT_NEAR(after.mean, 0, 1e-12);
  EXPECT_NEAR(after.sd, 1, 1e-12);
  EXPECT_GT(a[1][0], 0) << "an action better than the batch's mean keeps a positive advantage";
  Returns flat = {{2, 2}, {2, 2}};
  normalize_advantages(&flat);
  for (const auto& row : flat)
    for (double x : row) EXPECT_EQ(x, 0);
}

// GAE's two ends: lambda = 1 gives the discounted return minus the value, lambda = 0 the
// one-step TD error; the value targets are advantage + value.
TEST(Advantages, GeneralizedAdvantageEstimation) {
  const Returns rewards = {{1.0, 0.0, 2.0}};
  const Returns values = {{0.5, 1.0, -1.0}};
  Returns targets;
  const double g = 0.9;
  Returns mc = gae_advantages(rewards, values, g, 1.0, &targets);
  const double g2 = 2.0, g1 = 0.0 + g * g2, g0 = 1.0 + g * g1;
  EXPECT_NEAR(mc[0][0], g0 - 0.5, 1e-12);
  EXPECT_NEAR(mc[0][1], g1 - 1.0, 1e-12);
  EXPECT_NEAR(mc[0][2], g2 + 1.0, 1e-12);
  EXPECT_NEAR(targets[0][0], g0, 1e-12);
  Returns td = gae_advantages(rewards, values, g, 0.0);
  EXPECT_NEAR(td[0][0], 1.0 + g * 1.0 - 0.5, 1e-12);
  EXPECT_NEAR(td[0][1], 0.0 + g * -1.0 - 1.0, 1e-12);
  EXPECT_NEAR(td[0][2], 2.0 - -1.0, 1e-12);
  Returns mid = gae_advantages(rewards, values, g, 0.5);
  EXPECT_NEAR(mid[0][1], td[0][1] + g * 0.5 * td[0][2], 1e-12);
}

TEST(Advantages, CosineSimilarity) {
  EXPECT_NEAR(cosine_similarity({1, 0}, {0, 2}), 0, 1e-12);
  EXPECT_NEAR(cosine_similarity({1, 1}, {2, 2}), 1, 1e-12);
  EXPECT_NEAR(cosine_similarity({1, 1}, {-1, -1}), -1, 1e-12);
  EXPECT_EQ(cosine_similarity({0, 0}, {1, 1}), 0);
}

}  // namespace
}  // namespace placeto
