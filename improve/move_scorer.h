// The learned search's network: a small MLP that scores every (op, device) move from its
// what-if features (improve/what_if.h), one forward pass for all pairs of a placement.  The
// scores are logits of a softmax over the moves of one placement.  Because a move is scored
// from its own row, the same parameters apply to any device count and any cluster.
//
// Plain C++ on a flat parameter vector (the layout of training/adam.h): a forward over ~1000
// pairs takes well under a millisecond, so placing needs no LibTorch, and training computes
// the gradient of the listwise loss by hand (tests/improve/move_scorer_test.cc checks it
// against finite differences).  Not thread-safe (scratch buffers); one per thread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/checkpoint/checkpoint_file.h"

namespace placeto {

struct ScorerShape {
  int inputs = 0;
  int hidden1 = 32;
  int hidden2 = 16;
};

// The builds of the forward pass, narrowest first (force_kernel_for_testing).
enum class ScorerKernel { kBaseline, kAvx2, kAvx512, kBest };

class MoveScorer {
 public:
  MoveScorer() = default;
  explicit MoveScorer(ScorerShape shape);

  const ScorerShape& shape() const { return shape_; }
  size_t num_params() const { return params_.size(); }
  std::vector<float>& params() { return params_; }
  const std::vector<float>& params() const { return params_; }
  // Inputs are standardized as (x - mean) * scale before the first layer.
  std::vector<float>& feature_mean() { return mean_; }
  std::vector<float>& feature_scale() { return scale_; }

  // He-normal weights, zero biases, identity standardization.
  void init(uint64_t seed);
  // Sets mean and scale from rows of features (scale = 1 / std, 1 for constant columns).
  void fit_standardization(const std::vector<float>& rows, size_t num_rows);

  // scores[i] for rows x[i * row_stride ..], i < rows, of which the first `inputs` columns are
  // read (row_stride 0: inputs).  What-if columns are only ever appended, so a scorer trained
  // on fewer of them reads rows of today's width with row_stride WhatIf::kNumFeatures.
  void score(const float* x, size_t rows, float* scores, int row_stride = 0);

  // Listwise cross-entropy of one placement's moves: -sum_i target_i log softmax(scores)_i,
  // `target` a distribution over the rows.  Adds `weight` times its gradient to
  // grad[0 .. num_params()) and returns the unweighted loss.  With `scores`, also writes
  // the scores of the forward pass it made (what score() would give), sparing a second one.
  // With `temperature` T the softmax is over scores / T.  With a one-hot target on the move
  // a policy softmax(scores / T) drew, the gradient is that of -log pi(move): REINFORCE's.
  // Rows are read as score() reads them (row_stride 0: inputs).
  double listwise_loss(const float* x, size_t rows, const float* target, float* grad,
                       double weight = 1.0, float* scores = nullptr, double temperature = 1.0,
                       int row_stride = 0);

  // The forward pass of the shipped widths (32-16, 64-32) has AVX-512 and AVX2 builds, the
  // widest the CPU has used, and a baseline one; all give the same bits.  Tests run each:
  // this makes the process use `kernel`, or the widest the CPU has if that is narrower
  // (kBest: the widest), and returns the kernel now in use.
  static ScorerKernel force_kernel_for_testing(ScorerKernel kernel);

  // Checkpoint arrays (/model/scorer/...) and back.  from_checkpoint throws InputError naming
  // `source` when the arrays are missing or have other shapes.
  void to_checkpoint(CheckpointData* data) const;
  static MoveScorer from_checkpoint(const CheckpointData& data, const std::string& source);

 private:
  // Offsets of the layers in params_.
  size_t w1() const { return 0; }
  size_t b1() const { return w1() + static_cast<size_t>(shape_.hidden1) * shape_.inputs; }
  size_t w2() const { return b1() + shape_.hidden1; }
  size_t b2() const { return w2() + static_cast<size_t>(shape_.hidden2) * shape_.hidden1; }
  size_t w3() const { return b2() + shape_.hidden2; }
  size_t b3() const { return w3() + shape_.hidden2; }
  void forward(const float* x, size_t rows, float* scores, int row_stride);

  ScorerShape shape_;
  std::vector<float> params_, mean_, scale_;
  // Scratch of the latest forward: standardized inputs and both hidden layers.
  std::vector<float> xn_, h1_, h2_, dz_, dh1_, dh2_;
  std::vector<float> w1t_, w2t_;  // the weights transposed, rebuilt by every forward
};

}  // namespace placeto
