// Device profiles and the roofline cost model: how long an op takes on a device from the
// FLOPs it performs and the bytes it moves, and how large a tensor is.  Figures and formulas
// are documented with their sources in docs/COST_MODEL.md.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace placeto {

// What one class of ops (an op-cost family of sim/onnx/op_costs.h, e.g. "conv", "conv_grad")
// achieves on a device, fitted to measurements (`placeto profile`): an op of the class takes
// overhead_us + max(flops / flops_per_s, bytes / bytes_per_s).
struct OpClassRate {
  double flops_per_s = 0;
  double bytes_per_s = 0;
  double overhead_us = 0;
};

struct DeviceProfile {
  std::string name;                 // "k80", "v100", "a100", "h100", or a fitted profile's name
  double peak_flops = 0;            // FP32 FLOP/s (a multiply-add counts as 2)
  double mem_bandwidth = 0;         // device memory bytes/s
  double compute_efficiency = 0.5;  // fraction of peak FLOP/s a typical kernel reaches
  double memory_efficiency = 0.7;   // fraction of peak bandwidth a typical kernel reaches
  double launch_overhead_us = 5.0;  // fixed cost per op
  double memory_bytes = 0;          // capacity
  // Links to a peer device of the same kind in one node, and across nodes.
  double intra_node_bandwidth = 0;  // bytes/s (PCIe or NVLink)
  double intra_node_latency_us = 0;
  double inter_node_bandwidth = 0;  // bytes/s (network)
  double inter_node_latency_us = 0;
  // Fitted per-class rates (empty for the named profiles); a class without an entry uses the
  // roofline above.
  std::map<std::string, OpClassRate> op_classes;
};

// Known profiles; throws InputError naming the unknown one and listing the known names.
const DeviceProfile& device_profile(const std::string& name);
std::vector<std::string> device_profile_names();

// Roofline: launch overhead + max(flops / achieved FLOP/s, bytes / achieved bandwidth), in us.
double roofline_cost_us(double flops, double bytes_moved, const DeviceProfile& profile);
// The same with the profile's fitted rate for `op_class` when it has one.
double op_class_cost_us(double flops, double bytes_moved, const DeviceProfile& profile,
                        const std::string& op_class);

// FLOPs of common ops, a multiply-add counting as 2 (ResNet-50's forward pass is about
// 4.1 G multiply-adds = 8.2 GFLOP per 224x224 image under this convention).
// A 2-D convolution producing batch x out_h x out_w x cout from cin channels with a kh x kw
// kernel in `groups` groups (groups == cin: depthwise).
double conv2d_flops(int64_t batch, int64_t out_h, int64_t out_w, int64_t cin, int64_t cout,
                    int64_t kh, int64_t kw, int64_t groups = 1);
// (m x k) times (k x n).
double matmul_flops(int64_t m, int64_t n, int64_t k);

// Bytes of a tensor of the given shape and element size; unknown (negative) dims count as 1.
int64_t tensor_bytes(const std::vector<int64_t>& shape, int64_t element_bytes);

}  // namespace placeto
