// Advantages of a batch: leave-one-out baselines, normalisation, gradient cosine (no torch).
#include "learner/advantages.h"

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

TEST(Advantages, CosineSimilarity) {
  EXPECT_NEAR(cosine_similarity({1, 0}, {0, 2}), 0, 1e-12);
  EXPECT_NEAR(cosine_similarity({1, 1}, {2, 2}), 1, 1e-12);
  EXPECT_NEAR(cosine_similarity({1, 1}, {-1, -1}), -1, 1e-12);
  EXPECT_EQ(cosine_similarity({0, 0}, {1, 1}), 0);
}

}  // namespace
}  // namespace placeto
