#include "sim/cost_fit.h"

#include <algorithm>
#include <cmath>

#include "common/error.h"

namespace placeto {
namespace {

double predict(const OpClassRate& r, const CostSample& s) {
  return r.overhead_us + 1e6 * std::max(s.flops / r.flops_per_s, s.bytes / r.bytes_per_s);
}

double loss(const OpClassRate& r, const std::vector<CostSample>& samples) {
  double sum = 0;
  for (const CostSample& s : samples) {
    const double e = std::log(std::max(predict(r, s), 1e-3)) - std::log(s.measured_us);
    sum += e * e;
  }
  return sum;
}

// Log-spaced values from lo to hi, `n` of them.
std::vector<double> log_grid(double lo, double hi, int n) {
  std::vector<double> v;
  for (int i = 0; i < n; ++i) v.push_back(lo * std::pow(hi / lo, n == 1 ? 0.0 : i / (n - 1.0)));
  return v;
}

OpClassRate search(const std::vector<CostSample>& samples, const std::vector<double>& flops,
                   const std::vector<double>& bytes, const std::vector<double>& overheads) {
  OpClassRate best{flops.back(), bytes.back(), overheads.front()};
  double best_loss = loss(best, samples);
  for (double o : overheads)
    for (double f : flops)
      for (double b : bytes) {
        OpClassRate r{f, b, o};
        const double l = loss(r, samples);
        if (l < best_loss) {
          best_loss = l;
          best = r;
        }
      }
  return best;
}

double quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t i =
      std::min(v.size() - 1, static_cast<size_t>(std::floor(q * (v.size() - 1) + 0.5)));
  return v[i];
}

}  // namespace

OpClassRate fit_rate(const std::vector<CostSample>& samples) {
  PLACETO_CHECK(!samples.empty());
  double min_t = samples[0].measured_us;
  for (const CostSample& s : samples) min_t = std::min(min_t, s.measured_us);
  // Coarse: 1e7..1e15 FLOP/s and 1e6..1e13 B/s, overheads up to the shortest op.
  std::vector<double> overheads = {0};
  for (double o : log_grid(0.1, std::max(0.2, min_t), 16)) overheads.push_back(o);
  OpClassRate r = search(samples, log_grid(1e7, 1e15, 65), log_grid(1e6, 1e13, 57), overheads);
  // Refine around the coarse optimum (the coarse steps are a factor of ~1.33).
  const double step = 1.35;
  std::vector<double> fine_o = {0};
  for (double o :
       log_grid(std::max(0.05, r.overhead_us / 2), std::max(0.1, r.overhead_us * 1.5), 11))
    fine_o.push_back(std::min(o, min_t));
  return search(samples, log_grid(r.flops_per_s / step, r.flops_per_s * step, 13),
                log_grid(r.bytes_per_s / step, r.bytes_per_s * step, 13), fine_o);
}

DeviceProfile fit_device_profile(const std::vector<CostSample>& samples, const DeviceProfile& base,
                                 const std::string& name, const FitOptions& options) {
  std::vector<CostSample> all;
  std::map<std::string, std::vector<CostSample>> by_class;
  for (const CostSample& s : samples) {
    if (!(s.measured_us > 0) || !std::isfinite(s.measured_us)) continue;
    all.push_back(s);
    by_class[s.op_class].push_back(s);
  }
  if (all.empty()) throw InputError("no measured ops to fit a device profile to");
  DeviceProfile p = base;
  p.name = name;
  p.op_classes.clear();
  const OpClassRate overall = fit_rate(all);
  p.peak_flops = overall.flops_per_s;
  p.mem_bandwidth = overall.bytes_per_s;
  p.compute_efficiency = 1;
  p.memory_efficiency = 1;
  p.launch_overhead_us = overall.overhead_us;
  for (const auto& [cls, group] : by_class)
    if (static_cast<int>(group.size()) >= options.min_class_samples)
      p.op_classes[cls] = fit_rate(group);
  return p;
}

ErrorStats error_stats(const std::vector<double>& predicted, const std::vector<double>& measured) {
  PLACETO_CHECK_EQ(predicted.size(), measured.size());
  ErrorStats e;
  std::vector<double> rel;
  double sum_p = 0, sum_m = 0;
  for (size_t i = 0; i < measured.size(); ++i) {
    if (!(measured[i] > 0)) continue;
    rel.push_back(std::abs(predicted[i] - measured[i]) / measured[i]);
    sum_p += predicted[i];
    sum_m += measured[i];
  }
  e.ops = static_cast<int>(rel.size());
  e.median_abs = quantile(rel, 0.5);
  e.p90_abs = quantile(rel, 0.9);
  e.sum_ratio = sum_m > 0 ? sum_p / sum_m : 0;
  return e;
}

double best_scale(const std::vector<double>& predicted, const std::vector<double>& measured) {
  PLACETO_CHECK_EQ(predicted.size(), measured.size());
  double sum = 0;
  int n = 0;
  for (size_t i = 0; i < measured.size(); ++i)
    if (measured[i] > 0 && predicted[i] > 0) {
      sum += std::log(measured[i] / predicted[i]);
      ++n;
    }
  return n == 0 ? 1.0 : std::exp(sum / n);
}

}  // namespace placeto
