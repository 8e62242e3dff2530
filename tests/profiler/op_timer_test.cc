// Timing ops with LibTorch (profiler/op_timer.h): every op type of the exported test models
// runs as its own kernel with the op's output shape, and the backward and update are timed.
#include "profiler/op_timer.h"

#include <gtest/gtest.h>

#include "common/error.h"
#include "tests/onnx/op_spec_util.h"

namespace placeto {
namespace {

TimingOptions quick() {
  TimingOptions o;
  o.warmup = 1;
  o.repeats = 2;
  o.min_sample_us = 50;
  o.backward = true;
  return o;
}

struct Case {
  OpSpec op;
  std::string kernel;  // expected prefix of OpTiming::kernel
};

std::vector<Case> cases() {
  std::vector<Case> c;
  OpSpec conv =
      Op("Conv", {T({1, 16, 8, 8}), T({32, 16, 3, 3}, true), T({32}, true)}, {T({1, 32, 4, 4})});
  conv.attrs.ints["strides"] = {2, 2};
  conv.attrs.ints["pads"] = {1, 1, 1, 1};
  c.push_back({conv, "convolution"});
  OpSpec gemm = Op("Gemm", {T({2, 64}), T({10, 64}, true), T({10}, true)}, {T({2, 10})});
  gemm.attrs.ints["transB"] = {1};
  c.push_back({gemm, "addmm"});
  c.push_back({Op("MatMul", {T({8, 4, 16}), T({16, 5}, true)}, {T({8, 4, 5})}), "matmul"});
  OpSpec pool = Op("MaxPool", {T({1, 4, 9, 9})}, {T({1, 4, 4, 4})});
  pool.attrs.ints["kernel_shape"] = {3, 3};
  pool.attrs.ints["strides"] = {2, 2};
  c.push_back({pool, "pool"});
  c.push_back({Op("GlobalAveragePool", {T({1, 4, 5, 5})}, {T({1, 4, 1, 1})}), "pool"});
  c.push_back({Op("Add", {T({2, 3, 4}), T({4}, true)}, {T({2, 3, 4})}), "elementwise (Add)"});
  c.push_back({Op("Relu", {T({2, 3})}, {T({2, 3})}), "elementwise (Relu)"});
  OpSpec softmax = Op("LogSoftmax", {T({3, 7})}, {T({3, 7})});
  c.push_back({softmax, "log_softmax"});
  OpSpec mean = Op("ReduceMean", {T({2, 5, 6})}, {T({2, 5, 1})});
  mean.attrs.ints["axes"] = {-1};
  c.push_back({mean, "reduce"});
  OpSpec bn = Op("BatchNormalization",
                 {T({1, 4, 3, 3}), T({4}, true), T({4}, true), T({4}, true), T({4}, true)},
                 {T({1, 4, 3, 3})});
  c.push_back({bn, "normalization"});
  // LSTM: 5 steps, batch 2, input 6, hidden 8, one direction, with biases.
  OpSpec lstm =
      Op("LSTM", {T({5, 2, 6}), T({1, 32, 6}, true), T({1, 32, 8}, true), T({1, 64}, true)},
         {T({5, 1, 2, 8}), T({1, 2, 8}), T({1, 2, 8})});
  c.push_back({lstm, "recurrent (LSTM)"});
  OpSpec concat = Op("Concat", {T({2, 3}), T({2, 5})}, {T({2, 8})});
  concat.attrs.ints["axis"] = {1};
  c.push_back({concat, "copy (Concat)"});
  OpSpec gather = Op("Gather", {T({100, 16}, true), T({4, 3}, false, 8)}, {T({4, 3, 16})});
  c.push_back({gather, "copy (Gather)"});
  OpSpec transpose = Op("Transpose", {T({2, 3, 4})}, {T({4, 2, 3})});
  transpose.attrs.ints["perm"] = {2, 0, 1};
  c.push_back({transpose, "copy (Transpose)"});
  c.push_back(
      {Op("Slice", {T({6, 8}), T({1}, false, 8), T({1}, false, 8)}, {T({6, 3})}), "copy (Slice)"});
  c.push_back({Op("Pad", {T({1, 2, 5, 5}), T({8}, false, 8)}, {T({1, 2, 7, 7})}), "copy (Pad)"});
  c.push_back({Op("Expand", {T({1, 4}), T({2}, false, 8)}, {T({3, 4})}), "copy (Expand)"});
  return c;
}

TEST(OpTimer, EveryKernelRunsWithTheOpsOutputShape) {
  for (const Case& c : cases()) {
    int64_t params = 0;
    for (const TensorInfo& t : c.op.inputs)
      if (t.is_param) params += t.bytes();
    const OpTiming t = time_op(c.op, params, quick());
    SCOPED_TRACE(c.op.op_type);
    EXPECT_TRUE(t.ran);
    EXPECT_EQ(t.kernel.rfind(c.kernel, 0), 0u) << t.kernel;
    EXPECT_EQ(t.out_shape, c.op.outputs[0].shape);
    EXPECT_GT(t.forward_us, 0);
    EXPECT_GT(t.backward_us, 0);
    if (params > 0)
      EXPECT_GT(t.update_us, 0);
    else
      EXPECT_LT(t.update_us, 0);
  }
}

TEST(OpTimer, LargerOpsTakeLonger) {
  auto matmul = [](int64_t n) { return Op("MatMul", {T({n, n}), T({n, n})}, {T({n, n})}); };
  TimingOptions o = quick();
  o.backward = false;
  const double small = time_op(matmul(16), 0, o).forward_us;
  const double large = time_op(matmul(256), 0, o).forward_us;
  EXPECT_GT(large, 20 * small);  // 4096x the FLOPs
}

TEST(OpTimer, UnknownShapesAndUnknownTypes) {
  OpSpec unknown = Op("Relu", {T({2, 3})}, {TensorInfo{}});
  const OpTiming t = time_op(unknown, 0, quick());
  EXPECT_FALSE(t.ran);
  EXPECT_NE(t.kernel.find("unknown shapes"), std::string::npos);
  const OpTiming g = time_op(Op("Frobnicate", {T({4, 4})}, {T({2, 8})}), 0, quick());
  EXPECT_TRUE(g.ran);
  EXPECT_EQ(g.kernel.rfind("generic copy", 0), 0u) << g.kernel;
  EXPECT_EQ(g.out_shape, (std::vector<int64_t>{2, 8}));
}

TEST(OpTimer, DevicesAreChecked) {
  EXPECT_NO_THROW(check_timing_device("cpu"));
  EXPECT_THROW(check_timing_device("tpu:0"), InputError);
  // Debian's LibTorch has no CUDA; with a CUDA build and a GPU this must not throw.
  try {
    check_timing_device("cuda:0");
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("cuda:0"), std::string::npos);
  }
  EXPECT_THROW(set_timing_threads(0), InputError);
}

}  // namespace
}  // namespace placeto
