// Fitting a device profile to measured op times, and the error of a cost model against
// measurements (`placeto profile`, docs/COST_MODEL.md).  Pure functions; thread-safe.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "sim/cost_model.h"

namespace placeto {

// One measured op: its class (sim/onnx/op_costs.h cost_class, "<class>_grad", "update"), the
// FLOPs and bytes the cost model gives it, and the measured time.
struct CostSample {
  std::string op_class;
  double flops = 0;
  double bytes = 0;
  double measured_us = 0;
};

struct FitOptions {
  int min_class_samples = 3;  // classes with fewer samples use the profile's own roofline
};

// The rates that minimise the squared error of log(predicted) - log(measured) for
// t = overhead + max(flops / F, bytes / B), by a grid search over F, B (log-spaced) and the
// overhead, refined once.  REQUIRES: samples non-empty, every measured_us > 0.
OpClassRate fit_rate(const std::vector<CostSample>& samples);

// A profile named `name` for the measured device: its roofline (peak_flops, mem_bandwidth,
// launch_overhead_us, efficiencies 1) fitted to all samples, and a rate per class with at
// least min_class_samples samples.  Memory and links come from `base`.  Samples with
// measured_us <= 0 are ignored.
DeviceProfile fit_device_profile(const std::vector<CostSample>& samples, const DeviceProfile& base,
                                 const std::string& name, const FitOptions& options = {});

// Relative errors |predicted - measured| / measured over ops with measured > 0.
struct ErrorStats {
  int ops = 0;
  double median_abs = 0;  // median of |relative error|
  double p90_abs = 0;     // 90th percentile
  double sum_ratio = 0;   // sum(predicted) / sum(measured): the error of a total
};
ErrorStats error_stats(const std::vector<double>& predicted, const std::vector<double>& measured);

// The single factor s minimising the squared log error of s * predicted against measured
// (the geometric mean of measured / predicted): what a profile of the right shape but the
// wrong speed is off by.  1 when nothing is measured.
double best_scale(const std::vector<double>& predicted, const std::vector<double>& measured);

}  // namespace placeto
