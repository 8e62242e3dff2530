// Adam over one flat parameter vector, with global-norm gradient clipping and the linear
// learning-rate schedule of the reference (1e-3 decayed linearly to 1e-4).  Flat vectors
// make the update identical on every rank after an all-reduce, and the state trivially
// checkpointable.  No torch.  Not thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace placeto {

struct AdamConfig {
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
};

class Adam {
 public:
  Adam(size_t num_params, AdamConfig config = {});
  // One update step: params -= lr * m_hat / (sqrt(v_hat) + eps).
  void update(float* params, const float* grads, double lr);

  size_t size() const { return exp_avg_.size(); }
  int64_t step() const { return step_; }
  std::vector<float>& exp_avg() { return exp_avg_; }
  std::vector<float>& exp_avg_sq() { return exp_avg_sq_; }
  const std::vector<float>& exp_avg() const { return exp_avg_; }
  const std::vector<float>& exp_avg_sq() const { return exp_avg_sq_; }
  void set_step(int64_t s) { step_ = s; }

 private:
  AdamConfig config_;
  std::vector<float> exp_avg_, exp_avg_sq_;
  int64_t step_ = 0;
};

// Scales `grads` so that their L2 norm is at most `max_norm` (no-op when max_norm <= 0).
// Returns the norm before clipping.
double clip_global_norm(float* grads, size_t n, double max_norm);

// lr at iteration `it` of `total`: linear from `start` to `end`.
double linear_schedule(double start, double end, int64_t it, int64_t total);

}  // namespace placeto
