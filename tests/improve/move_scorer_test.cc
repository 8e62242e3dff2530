// The move scorer: the hand-written gradient of the listwise loss equals finite differences,
// training lowers the loss, and checkpoints round-trip and refuse what does not fit.
#include "improve/move_scorer.h"

#include <gtest/gtest.h>

#include <cmath>

#include "common/error.h"
#include "common/rng.h"
#include "improve/scorer_config.h"
#include "sim/cluster.h"

namespace placeto {
namespace {

std::vector<float> random_rows(size_t rows, int f, uint64_t seed) {
  Rng rng(seed);
  std::vector<float> x(rows * f);
  for (float& v : x) v = static_cast<float>(rng.uniform01() * 2 - 1);
  return x;
}

// A 5-6-4 scorer whose biases are nudged off zero, so that no unit sits exactly at a kink.
MoveScorer nudged_scorer(uint64_t init_seed, uint64_t nudge_seed) {
  MoveScorer s(ScorerShape{5, 6, 4});
  s.init(init_seed);
  Rng rng(nudge_seed);
  for (float& p : s.params()) p += static_cast<float>(0.05 * (rng.uniform01() - 0.5));
  return s;
}

// `grad` (weight x the gradient of the loss at `temperature`) against central differences.
void expect_gradient_matches_differences(MoveScorer& s, const std::vector<float>& x,
                                         const std::vector<float>& target,
                                         const std::vector<float>& grad, double weight,
                                         double temperature, double tolerance) {
  const size_t rows = target.size();
  std::vector<float> unused(s.num_params());
  for (size_t i = 0; i < s.num_params(); ++i) {
    const float keep = s.params()[i];
    const float h = 1e-3f;
    s.params()[i] = keep + h;
    const double up =
        s.listwise_loss(x.data(), rows, target.data(), unused.data(), 1.0, nullptr, temperature);
    s.params()[i] = keep - h;
    const double down =
        s.listwise_loss(x.data(), rows, target.data(), unused.data(), 1.0, nullptr, temperature);
    s.params()[i] = keep;
    EXPECT_NEAR(grad[i], weight * (up - down) / (2 * h), tolerance) << "parameter " << i;
  }
}

TEST(MoveScorer, ListwiseGradientMatchesFiniteDifferences) {
  MoveScorer s = nudged_scorer(3, 9);
  const size_t rows = 7;
  const std::vector<float> x = random_rows(rows, 5, 4);
  std::vector<float> target(rows, 0.0f);
  target[2] = 0.7f;
  target[5] = 0.3f;
  std::vector<float> grad(s.num_params(), 0.0f);
  std::vector<float> from_loss(rows), from_score(rows);
  s.listwise_loss(x.data(), rows, target.data(), grad.data(), 1.0, from_loss.data());
  s.score(x.data(), rows, from_score.data());
  EXPECT_EQ(from_loss, from_score);  // the scores it hands back are score()'s
  expect_gradient_matches_differences(s, x, target, grad, 1.0, 1.0, 2e-3);
}

// With a temperature the loss is over softmax(scores / T); with a one-hot target this is the
// -log pi(move) whose gradient REINFORCE weights by the advantage.
TEST(MoveScorer, TemperedGradientMatchesFiniteDifferences) {
  MoveScorer s = nudged_scorer(5, 11);
  const size_t rows = 9;
  const std::vector<float> x = random_rows(rows, 5, 6);
  std::vector<float> target(rows, 0.0f);
  target[4] = 1.0f;
  const double t = 0.25, weight = -0.7;  // a negative advantage pushes the move down
  std::vector<float> grad(s.num_params(), 0.0f), unused(s.num_params());
  s.listwise_loss(x.data(), rows, target.data(), grad.data(), weight, nullptr, t);
  const double at_one = s.listwise_loss(x.data(), rows, target.data(), unused.data());
  const double at_t =
      s.listwise_loss(x.data(), rows, target.data(), unused.data(), 1.0, nullptr, t);
  EXPECT_NE(at_one, at_t);  // the temperature is applied
  expect_gradient_matches_differences(s, x, target, grad, weight, t, 8e-3);
}

TEST(MoveScorer, GradientStepsLowerTheLossAndRankTheTargetFirst) {
  MoveScorer s(ScorerShape{4, 8, 4});
  s.init(1);
  const size_t rows = 20;
  // The target is the row with the largest first feature.
  const std::vector<float> x = random_rows(rows, 4, 2);
  size_t best = 0;
  for (size_t r = 1; r < rows; ++r)
    if (x[r * 4] > x[best * 4]) best = r;
  std::vector<float> target(rows, 0.0f);
  target[best] = 1.0f;
  std::vector<float> grad(s.num_params());
  double first = 0, last = 0;
  for (int step = 0; step < 300; ++step) {
    std::fill(grad.begin(), grad.end(), 0.0f);
    const double loss = s.listwise_loss(x.data(), rows, target.data(), grad.data());
    if (step == 0) first = loss;
    last = loss;
    for (size_t i = 0; i < grad.size(); ++i) s.params()[i] -= 0.05f * grad[i];
  }
  EXPECT_LT(last, 0.5 * first);
  std::vector<float> scores(rows);
  s.score(x.data(), rows, scores.data());
  EXPECT_EQ(static_cast<size_t>(std::max_element(scores.begin(), scores.end()) - scores.begin()),
            best);
}

// The forward pass has kernels for the shipped widths (32-16 and 64-32, hidden layers in
// registers; AVX-512 and AVX2 builds where the CPU has them, and the baseline) and a plain
// loop for the others.  Every one adds in the same order as this reference, so the scores
// agree to the bit: a search makes the same moves on any CPU.  Every build the CPU has runs.
TEST(MoveScorer, EveryWidthGivesTheReferenceScoresToTheBit) {
  for (const ScorerShape shape : {ScorerShape{31, 64, 32}, ScorerShape{31, 32, 16},
                                  ScorerShape{31, 24, 8}, ScorerShape{7, 8, 8}}) {
    MoveScorer s(shape);
    s.init(5);
    Rng rng(6);
    for (float& p : s.params()) p += static_cast<float>(0.1 * (rng.uniform01() - 0.5));
    const size_t rows = 37;
    const std::vector<float> x = random_rows(rows, shape.inputs, 7);
    // Each build this CPU runs: the baseline, AVX2 and AVX-512 where it has them.
    std::vector<std::vector<float>> got;
    std::vector<ScorerKernel> kernels;
    for (ScorerKernel k : {ScorerKernel::kBaseline, ScorerKernel::kAvx2, ScorerKernel::kAvx512}) {
      const ScorerKernel used = MoveScorer::force_kernel_for_testing(k);
      if (used != k) continue;  // the CPU lacks it
      kernels.push_back(k);
      got.emplace_back(rows);
      s.score(x.data(), rows, got.back().data());
    }
    MoveScorer::force_kernel_for_testing(ScorerKernel::kBest);
    ASSERT_FALSE(kernels.empty());
    EXPECT_EQ(kernels.front(), ScorerKernel::kBaseline);
    const int f = shape.inputs, h1 = shape.hidden1, h2 = shape.hidden2;
    const float* w1 = s.params().data();
    const float* b1 = w1 + h1 * f;
    const float* w2 = b1 + h1;
    const float* b2 = w2 + h2 * h1;
    const float* w3 = b2 + h2;
    const float b3 = w3[h2];
    for (size_t i = 0; i < rows; ++i) {
      std::vector<float> a1(h1), a2(h2);
      for (int j = 0; j < h1; ++j) {
        float v = b1[j];
        for (int k = 0; k < f; ++k) v += x[i * f + k] * w1[j * f + k];
        a1[j] = v > 0 ? v : 0.0f;
      }
      for (int j = 0; j < h2; ++j) {
        float v = b2[j];
        for (int k = 0; k < h1; ++k)
          if (a1[k] != 0) v += a1[k] * w2[j * h1 + k];
        a2[j] = v > 0 ? v : 0.0f;
      }
      float z = b3;
      for (int j = 0; j < h2; ++j) z += w3[j] * a2[j];
      for (size_t k = 0; k < kernels.size(); ++k)
        EXPECT_EQ(got[k][i], z) << f << "-" << h1 << "-" << h2 << " row " << i << " kernel "
                                << static_cast<int>(kernels[k]);
    }
  }
}

// A scorer of 5 inputs reads the first 5 columns of wider rows (what-if columns are only
// appended), so older checkpoints score today's rows as they scored their own.
TEST(MoveScorer, ReadsTheFirstInputsOfWiderRows) {
  MoveScorer s(ScorerShape{5, 6, 3});
  s.init(3);
  const size_t rows = 7;
  std::vector<float> narrow(rows * 5), wide(rows * 9, 123.0f);
  for (size_t i = 0; i < rows; ++i)
    for (int k = 0; k < 5; ++k) narrow[i * 5 + k] = wide[i * 9 + k] = 0.1f * (i + 1) - 0.3f * k;
  std::vector<float> a(rows), b(rows);
  s.score(narrow.data(), rows, a.data());
  s.score(wide.data(), rows, b.data(), 9);
  EXPECT_EQ(a, b);
}

TEST(MoveScorer, CheckpointRoundTripsAndRefusesOtherShapes) {
  MoveScorer s(ScorerShape{5, 6, 3});
  s.init(11);
  s.feature_mean()[1] = 0.5f;
  s.feature_scale()[2] = 3.0f;
  CheckpointData d;
  s.to_checkpoint(&d);
  MoveScorer r = MoveScorer::from_checkpoint(d, "mem");
  EXPECT_EQ(r.params(), s.params());
  EXPECT_EQ(r.feature_mean(), s.feature_mean());
  EXPECT_EQ(r.feature_scale(), s.feature_scale());
  EXPECT_EQ(r.shape().hidden2, 3);

  CheckpointData bad = d;
  bad.model["scorer/b2"] = NamedArray::from_floats({4}, std::vector<float>(4, 0.0f));
  try {
    MoveScorer::from_checkpoint(bad, "x.h5");
    FAIL() << "accepted a b2 of the wrong shape";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("x.h5: /model/scorer/b2 has shape [4]"), std::string::npos)
        << e.what();
  }
  CheckpointData none;
  try {
    MoveScorer::from_checkpoint(none, "p.h5");
    FAIL() << "accepted a checkpoint without a scorer";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("not a learned-search checkpoint"), std::string::npos);
  }
  CheckpointData nan = d;
  std::vector<float> w = d.model["scorer/b1"].to_floats();
  w[0] = NAN;
  nan.model["scorer/b1"] = NamedArray::from_floats({6}, w);
  EXPECT_THROW(MoveScorer::from_checkpoint(nan, "n.h5"), InputError);
}

}  // namespace
// The scorer-training configs that experiments/ names load, and their cluster files exist
// (paths relative to the repository root, where the scripts run); the one scorer for every
// family names the three families.
TEST(ScorerConfig, ExperimentConfigsLoad) {
  const std::string root = std::string(PLACETO_SOURCE_DIR) + "/";
  for (const char* name :
       {"search_ptb", "search_nmt", "search_cifar10", "search_default", "search_broad",
        "search_without_ptb", "search_without_nmt", "search_without_cifar10"}) {
    SCOPED_TRACE(name);
    const ScorerTrainConfig c =
        load_scorer_train_config(root + "experiments/configs/" + name + ".yaml", {});
    for (const std::string& file : c.clusters)
      EXPECT_GT(load_cluster(root + file).num_devices(), 1);
    if (std::string(name) == "search_default") {
      EXPECT_EQ(c.families, (std::vector<std::string>{"ptb", "nmt", "cifar10"}));
    }
    if (std::string(name) == "search_broad") {  // the default model's mix
      EXPECT_EQ(c.families, (std::vector<std::string>{"ptb", "nmt", "cifar10", "layered"}));
      EXPECT_EQ(c.devices, (std::vector<int>{2, 3, 4, 8, 16}));
      EXPECT_FALSE(c.memory_factors.empty());
      EXPECT_FALSE(c.graph_files.empty());
    }
  }
}

}  // namespace placeto
