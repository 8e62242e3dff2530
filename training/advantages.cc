#include "training/advantages.h"

#include <cmath>

#include "common/error.h"

namespace placeto {

Returns leave_one_out_advantages(const Returns& returns) {
  const size_t k = returns.size();
  PLACETO_CHECK(k >= 2);
  const size_t steps = returns[0].size();
  std::vector<double> sum(steps, 0.0);
  for (const auto& g : returns) {
    PLACETO_CHECK_EQ(g.size(), steps);
    for (size_t t = 0; t < steps; ++t) sum[t] += g[t];
  }
  Returns adv(k, std::vector<double>(steps));
  const double others = static_cast<double>(k - 1);
  for (size_t e = 0; e < k; ++e)
    for (size_t t = 0; t < steps; ++t)
      adv[e][t] = returns[e][t] - (sum[t] - returns[e][t]) / others;
  return adv;
}

Returns gae_advantages(const Returns& rewards, const Returns& values, double gamma, double lambda,
                       Returns* value_targets) {
  PLACETO_CHECK_EQ(rewards.size(), values.size());
  Returns adv(rewards.size());
  if (value_targets) value_targets->assign(rewards.size(), {});
  for (size_t e = 0; e < rewards.size(); ++e) {
    const std::vector<double>& r = rewards[e];
    const std::vector<double>& v = values[e];
    PLACETO_CHECK_EQ(r.size(), v.size());
    adv[e].assign(r.size(), 0.0);
    double acc = 0;
    for (size_t t = r.size(); t-- > 0;) {
      const double next = t + 1 < r.size() ? v[t + 1] : 0.0;
      acc = r[t] + gamma * next - v[t] + gamma * lambda * acc;
      adv[e][t] = acc;
    }
    if (value_targets) {
      (*value_targets)[e].resize(r.size());
      for (size_t t = 0; t < r.size(); ++t) (*value_targets)[e][t] = adv[e][t] + v[t];
    }
  }
  return adv;
}

MeanSd advantage_stats(const Returns& advantages) {
  double sum = 0, cnt = 0;
  for (const auto& a : advantages)
    for (double x : a) {
      sum += x;
      cnt += 1;
    }
  MeanSd out;
  if (cnt == 0) return out;
  out.mean = sum / cnt;
  double sq = 0;  // two passes: no cancellation when the mean is large
  for (const auto& a : advantages)
    for (double x : a) sq += (x - out.mean) * (x - out.mean);
  out.sd = std::sqrt(sq / cnt);
  return out;
}

void normalize_advantages(Returns* advantages) {
  const MeanSd s = advantage_stats(*advantages);
  const double scale = s.sd > 1e-12 ? 1.0 / s.sd : 1.0;
  for (auto& a : *advantages)
    for (double& x : a) x = (x - s.mean) * scale;
}

double cosine_similarity(const std::vector<float>& a, const std::vector<float>& b) {
  PLACETO_CHECK_EQ(a.size(), b.size());
  double ab = 0, aa = 0, bb = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    ab += static_cast<double>(a[i]) * b[i];
    aa += static_cast<double>(a[i]) * a[i];
    bb += static_cast<double>(b[i]) * b[i];
  }
  if (aa == 0 || bb == 0) return 0;
  return ab / std::sqrt(aa * bb);
}

}  // namespace placeto
