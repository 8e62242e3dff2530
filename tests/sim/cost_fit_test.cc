// Fitting device profiles to measured op times (sim/cost_fit.h) and reading them from files
// (sim/device_profile_yaml.h).
#include "sim/cost_fit.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>

#include "common/error.h"
#include "sim/device_profile_yaml.h"

namespace placeto {
namespace {

// Ops of one class timed exactly as `r` predicts, spanning both roofline regimes.
std::vector<CostSample> exact_samples(const std::string& cls, const OpClassRate& r) {
  std::vector<CostSample> s;
  for (double flops : {1e5, 1e6, 1e7, 1e8, 1e9})
    for (double bytes : {1e3, 1e5, 1e7, 1e8}) {
      const double t = r.overhead_us + 1e6 * std::max(flops / r.flops_per_s, bytes / r.bytes_per_s);
      s.push_back({cls, flops, bytes, t});
    }
  return s;
}

TEST(CostFit, RecoversTheRatesThatMadeTheTimes) {
  const OpClassRate truth{3e10, 8e9, 4.0};
  const OpClassRate fit = fit_rate(exact_samples("conv", truth));
  EXPECT_NEAR(fit.flops_per_s / truth.flops_per_s, 1, 0.05);
  EXPECT_NEAR(fit.bytes_per_s / truth.bytes_per_s, 1, 0.05);
  EXPECT_NEAR(fit.overhead_us, truth.overhead_us, 0.6);
}

TEST(CostFit, ProfileHasARatePerClassAndKeepsTheBaseMemoryAndLinks) {
  std::vector<CostSample> s = exact_samples("conv", {5e10, 1e10, 10});
  for (const CostSample& e : exact_samples("elementwise", {2e9, 4e9, 2})) s.push_back(e);
  s.push_back({"softmax", 1e6, 1e6, 50});  // one sample: no class of its own
  const DeviceProfile& base = device_profile("k80");
  const DeviceProfile p = fit_device_profile(s, base, "test-fitted");
  EXPECT_EQ(p.name, "test-fitted");
  ASSERT_EQ(p.op_classes.size(), 2u);
  EXPECT_NEAR(p.op_classes.at("conv").flops_per_s / 5e10, 1, 0.05);
  EXPECT_NEAR(p.op_classes.at("elementwise").bytes_per_s / 4e9, 1, 0.05);
  EXPECT_EQ(p.memory_bytes, base.memory_bytes);
  EXPECT_EQ(p.intra_node_bandwidth, base.intra_node_bandwidth);
  EXPECT_EQ(p.compute_efficiency, 1);
  // A class with a rate uses it; one without uses the fitted roofline.
  EXPECT_NEAR(op_class_cost_us(1e9, 1e3, p, "conv") / (10 + 1e6 * 1e9 / 5e10), 1, 0.05);
  EXPECT_DOUBLE_EQ(op_class_cost_us(1e6, 1e6, p, "softmax"), roofline_cost_us(1e6, 1e6, p));
  EXPECT_THROW(fit_device_profile({{"conv", 1, 1, 0}}, base, "x"), InputError);
}

TEST(CostFit, ErrorStatsAndBestScale) {
  const ErrorStats e = error_stats({1, 2, 3, 40, 5}, {1, 1, 3, 4, 0});  // last: not measured
  EXPECT_EQ(e.ops, 4);
  EXPECT_DOUBLE_EQ(e.median_abs, 1.0);  // |err| = 0, 1, 0, 9
  EXPECT_DOUBLE_EQ(e.p90_abs, 9.0);
  EXPECT_DOUBLE_EQ(e.sum_ratio, 46.0 / 9.0);
  EXPECT_NEAR(best_scale({1, 2, 4}, {10, 20, 40}), 10, 1e-9);
  EXPECT_DOUBLE_EQ(best_scale({1}, {0}), 1.0);
}

TEST(DeviceProfileFile, RoundTripsAndIsResolvedByPath) {
  DeviceProfile p = device_profile("v100");
  p.name = "my-gpu";
  p.op_classes["matmul"] = {1.5e13, 7e11, 6.5};
  p.op_classes["conv_grad"] = {9e12, 5e11, 8};
  const std::string path = "/tmp/placeto_profile_roundtrip.yaml";
  std::ofstream(path) << device_profile_to_yaml(p, "{model: 'x.onnx', ops: 3}");
  const DeviceProfile q = resolve_device_profile(path);
  std::remove(path.c_str());
  EXPECT_EQ(q.name, "my-gpu");
  EXPECT_NEAR(q.peak_flops / p.peak_flops, 1, 1e-5);
  EXPECT_NEAR(q.inter_node_latency_us, p.inter_node_latency_us, 1e-9);
  ASSERT_EQ(q.op_classes.size(), 2u);
  EXPECT_NEAR(q.op_classes.at("matmul").flops_per_s / 1.5e13, 1, 1e-5);
  EXPECT_NEAR(q.op_classes.at("conv_grad").overhead_us, 8, 1e-9);
  EXPECT_EQ(resolve_device_profile("k80").name, "k80");
}

// Each bad file is an InputError naming the source and the key.
TEST(DeviceProfileFile, BadFilesNameTheKey) {
  auto error_of = [](const std::string& text) {
    try {
      device_profile_from_yaml_text(text, "bad.yaml");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string head = "format: placeto-device-profile\nname: x\n";
  EXPECT_NE(error_of("name: x\npeak_flops: 1\nmem_bandwidth: 1\n").find("format"),
            std::string::npos);
  EXPECT_NE(error_of(head + "base: k90\n").find("k90"), std::string::npos);
  EXPECT_NE(error_of(head + "peak_flops: 1\n").find("mem_bandwidth"), std::string::npos);
  const std::string e1 = error_of(head + "base: k80\npeak_flops: -3\n");
  EXPECT_NE(e1.find("bad.yaml"), std::string::npos) << e1;
  EXPECT_NE(e1.find("peak_flops"), std::string::npos) << e1;
  const std::string e2 = error_of(head +
                                  "base: k80\nop_classes:\n  conv: {flops_per_s: 0, "
                                  "bytes_per_s: 1}\n");
  EXPECT_NE(e2.find("op_classes.conv.flops_per_s"), std::string::npos) << e2;
  EXPECT_NE(error_of(head + "base: k80\npeak_flop: 3\n").find("peak_flops"), std::string::npos);
  EXPECT_NE(error_of(head + "base: k80\nversion: 2\n").find("version"), std::string::npos);
  EXPECT_THROW(resolve_device_profile("/nonexistent/p.yaml"), InputError);
}

}  // namespace
}  // namespace placeto
