#include "sim/cost_model.h"

#include <algorithm>

#include "common/error.h"

namespace placeto {

namespace {
// Figures from vendor data sheets; see docs/COST_MODEL.md for the sources.
std::vector<DeviceProfile> make_profiles() {
  std::vector<DeviceProfile> p;
  // One GK210 die of a Tesla K80 board (AWS p2 instances expose each die as one GPU).
  p.push_back({"k80", 4.37e12, 240e9, 0.5, 0.7, 5.7, 12e9, 7.6e9, 10.0, 1.25e9, 30.0, {}});
  // Tesla V100 SXM2 16 GB with NVLink 2.
  p.push_back({"v100", 15.7e12, 900e9, 0.5, 0.7, 4.0, 16e9, 50e9, 5.0, 12.5e9, 10.0, {}});
  // A100 SXM4 40 GB with NVLink 3.
  p.push_back({"a100", 19.5e12, 1555e9, 0.5, 0.7, 3.0, 40e9, 300e9, 3.0, 25e9, 8.0, {}});
  // H100 SXM5 80 GB with NVLink 4.
  p.push_back({"h100", 67e12, 3350e9, 0.5, 0.7, 2.5, 80e9, 450e9, 2.0, 50e9, 6.0, {}});
  return p;
}
const std::vector<DeviceProfile>& profiles() {
  static const std::vector<DeviceProfile> all = make_profiles();
  return all;
}
}  // namespace

const DeviceProfile& device_profile(const std::string& name) {
  for (const auto& p : profiles())
    if (p.name == name) return p;
  std::string known;
  for (const auto& p : profiles()) known += (known.empty() ? "" : ", ") + p.name;
  throw InputError("unknown device profile '" + name + "' (known: " + known + ")");
}

std::vector<std::string> device_profile_names() {
  std::vector<std::string> names;
  for (const auto& p : profiles()) names.push_back(p.name);
  return names;
}

double roofline_cost_us(double flops, double bytes_moved, const DeviceProfile& profile) {
  double compute_s = flops / (profile.peak_flops * profile.compute_efficiency);
  double memory_s = bytes_moved / (profile.mem_bandwidth * profile.memory_efficiency);
  return profile.launch_overhead_us + 1e6 * std::max(compute_s, memory_s);
}

double op_class_cost_us(double flops, double bytes_moved, const DeviceProfile& profile,
                        const std::string& op_class) {
  auto it = profile.op_classes.find(op_class);
  if (it == profile.op_classes.end()) return roofline_cost_us(flops, bytes_moved, profile);
  const OpClassRate& r = it->second;
  return r.overhead_us + 1e6 * std::max(flops / r.flops_per_s, bytes_moved / r.bytes_per_s);
}

double conv2d_flops(int64_t batch, int64_t out_h, int64_t out_w, int64_t cin, int64_t cout,
                    int64_t kh, int64_t kw, int64_t groups) {
  PLACETO_CHECK_GE(groups, 1);
  return 2.0 * static_cast<double>(batch) * out_h * out_w * cout * (cin / groups) * kh * kw;
}

double matmul_flops(int64_t m, int64_t n, int64_t k) {
  return 2.0 * static_cast<double>(m) * n * k;
}

int64_t tensor_bytes(const std::vector<int64_t>& shape, int64_t element_bytes) {
  int64_t n = 1;
  for (int64_t d : shape) n *= std::max<int64_t>(d, 1);
  return n * element_bytes;
}

}  // namespace placeto
