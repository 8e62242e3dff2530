// The cost model: the FLOP convention (ResNet-50's forward pass is about 4.1 G multiply-adds,
// 8.2 GFLOP), the roofline's two regimes, tensor sizes, and the profiles' ordering.
#include "sim/cost_model.h"

#include <gtest/gtest.h>

#include "common/error.h"

namespace placeto {
namespace {

// ResNet-50 v1.5 (stride in the 3x3 convolutions) on one 224x224 image.
double resnet50_flops() {
  double f = conv2d_flops(1, 112, 112, 3, 64, 7, 7);  // stem
  int64_t cin = 64, hw = 56;
  const int blocks[] = {3, 4, 6, 3};
  for (int stage = 0; stage < 4; ++stage) {
    const int64_t w = 64 << stage;
    for (int b = 0; b < blocks[stage]; ++b) {
      const int64_t in_hw = hw;
      const int64_t out_hw = (b == 0 && stage > 0) ? hw / 2 : hw;
      f += conv2d_flops(1, in_hw, in_hw, cin, w, 1, 1);
      f += conv2d_flops(1, out_hw, out_hw, w, w, 3, 3);
      f += conv2d_flops(1, out_hw, out_hw, w, 4 * w, 1, 1);
      if (b == 0) f += conv2d_flops(1, out_hw, out_hw, cin, 4 * w, 1, 1);  // projection
      cin = 4 * w;
      hw = out_hw;
    }
  }
  return f + matmul_flops(1, 1000, 2048);
}

TEST(CostModel, MultiplyAddCountsAsTwoFlops) {
  const double flops = resnet50_flops();
  EXPECT_GT(flops, 2 * 4.0e9);
  EXPECT_LT(flops, 2 * 4.2e9);
  EXPECT_DOUBLE_EQ(matmul_flops(2, 3, 4), 48.0);
  // Depthwise: one input channel per group.
  EXPECT_DOUBLE_EQ(conv2d_flops(1, 1, 1, 8, 8, 3, 3, 8), 2.0 * 8 * 9);
}

TEST(CostModel, RooflineTakesTheSlowerOfComputeAndMemory) {
  const DeviceProfile& k80 = device_profile("k80");
  const double compute_us = 1e6 * 1e9 / (k80.peak_flops * k80.compute_efficiency);
  EXPECT_DOUBLE_EQ(roofline_cost_us(1e9, 1000, k80), k80.launch_overhead_us + compute_us);
  const double memory_us = 1e6 * 1e9 / (k80.mem_bandwidth * k80.memory_efficiency);
  EXPECT_DOUBLE_EQ(roofline_cost_us(1000, 1e9, k80), k80.launch_overhead_us + memory_us);
  EXPECT_DOUBLE_EQ(roofline_cost_us(0, 0, k80), k80.launch_overhead_us);
}

TEST(CostModel, NewerProfilesAreFaster) {
  const char* order[] = {"k80", "v100", "a100", "h100"};
  for (int i = 1; i < 4; ++i) {
    const DeviceProfile& a = device_profile(order[i - 1]);
    const DeviceProfile& b = device_profile(order[i]);
    EXPECT_LT(roofline_cost_us(1e10, 1e8, b), roofline_cost_us(1e10, 1e8, a)) << order[i];
    EXPECT_GE(b.intra_node_bandwidth, a.intra_node_bandwidth) << order[i];
    EXPECT_GT(b.memory_bytes, a.memory_bytes) << order[i];
  }
  // The k80 profile's PCIe link is the compatible mode's fitted transfer speed.
  EXPECT_DOUBLE_EQ(device_profile("k80").intra_node_bandwidth * 1e-6, 7600.0);
}

TEST(CostModel, TensorBytesAndUnknownProfiles) {
  EXPECT_EQ(tensor_bytes({64, 3, 32, 32}, 4), 64 * 3 * 32 * 32 * 4);
  EXPECT_EQ(tensor_bytes({-1, 10}, 2), 20);
  try {
    device_profile("p100");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("p100"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("k80"), std::string::npos);
  }
}

}  // namespace
}  // namespace placeto
