#include "training/adam.h"

#include <algorithm>
#include <cmath>

namespace placeto {

Adam::Adam(size_t num_params, AdamConfig config)
    : config_(config), exp_avg_(num_params, 0.0f), exp_avg_sq_(num_params, 0.0f) {}

void Adam::update(float* params, const float* grads, double lr) {
  ++step_;
  const double b1 = config_.beta1, b2 = config_.beta2;
  const double c1 = 1.0 - std::pow(b1, static_cast<double>(step_));
  const double c2 = 1.0 - std::pow(b2, static_cast<double>(step_));
  for (size_t i = 0; i < exp_avg_.size(); ++i) {
    const double g = grads[i];
    exp_avg_[i] = static_cast<float>(b1 * exp_avg_[i] + (1.0 - b1) * g);
    exp_avg_sq_[i] = static_cast<float>(b2 * exp_avg_sq_[i] + (1.0 - b2) * g * g);
    const double m_hat = exp_avg_[i] / c1;
    const double v_hat = exp_avg_sq_[i] / c2;
    params[i] = static_cast<float>(params[i] - lr * m_hat / (std::sqrt(v_hat) + config_.eps));
  }
}

double clip_global_norm(float* grads, size_t n, double max_norm) {
  double sq = 0;
  for (size_t i = 0; i < n; ++i) sq += static_cast<double>(grads[i]) * grads[i];
  const double norm = std::sqrt(sq);
  if (max_norm > 0 && norm > max_norm) {
    const double s = max_norm / (norm + 1e-12);
    for (size_t i = 0; i < n; ++i) grads[i] = static_cast<float>(grads[i] * s);
  }
  return norm;
}

double linear_schedule(double start, double end, int64_t it, int64_t total) {
  if (total <= 1) return start;
  const double f = std::clamp(static_cast<double>(it) / static_cast<double>(total - 1), 0.0, 1.0);
  return start + (end - start) * f;
}

}  // namespace placeto
