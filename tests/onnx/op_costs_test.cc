// One test per op family of sim/onnx/op_costs.h, on hand-computed FLOP counts.
#include "sim/onnx/op_costs.h"

#include <gtest/gtest.h>

#include "tests/onnx/op_spec_util.h"

namespace placeto {
namespace {

TEST(OpCostsTest, Conv3x3On56x56CountsMultiplyAddAsTwo) {
  OpCost c = op_cost(Op("Conv", {T({1, 64, 56, 56}), T({64, 64, 3, 3}, true)}, {T({1, 64, 56, 56})},
                        {{"kernel_shape", {3, 3}}}));
  EXPECT_DOUBLE_EQ(c.flops, 2.0 * 3 * 3 * 64 * 64 * 56 * 56);
  EXPECT_DOUBLE_EQ(c.act_bytes, 2.0 * 64 * 56 * 56 * 4);
  EXPECT_DOUBLE_EQ(c.param_bytes, 64.0 * 64 * 9 * 4);
  EXPECT_FALSE(c.fallback);
}

TEST(OpCostsTest, ConvBiasAddsOneFlopPerOutput) {
  OpCost c = op_cost(
      Op("Conv", {T({1, 8, 10, 10}), T({16, 8, 1, 1}, true), T({16}, true)}, {T({1, 16, 10, 10})}));
  EXPECT_DOUBLE_EQ(c.flops, 2.0 * 16 * 100 * 8 + 16 * 100);
}

TEST(OpCostsTest, GroupedAndDepthwiseConv) {
  OpCost grouped = op_cost(Op("Conv", {T({1, 64, 56, 56}), T({128, 16, 3, 3}, true)},
                              {T({1, 128, 56, 56})}, {{"group", {4}}}));
  EXPECT_DOUBLE_EQ(grouped.flops, 2.0 * 128 * 56 * 56 * 16 * 9);
  OpCost depthwise = op_cost(Op("Conv", {T({2, 64, 56, 56}), T({64, 1, 3, 3}, true)},
                                {T({2, 64, 28, 28})}, {{"group", {64}}}));
  EXPECT_DOUBLE_EQ(depthwise.flops, 2.0 * 2 * 64 * 28 * 28 * 9);
  // Weights of unknown shape: channels / group and kernel_shape give the same count.
  TensorInfo unknown_w;
  OpCost from_attrs = op_cost(Op("Conv", {T({2, 64, 56, 56}), unknown_w}, {T({2, 64, 28, 28})},
                                 {{"group", {64}}, {"kernel_shape", {3, 3}}}));
  EXPECT_DOUBLE_EQ(from_attrs.flops, depthwise.flops);
}

TEST(OpCostsTest, ConvTransposeScattersEveryInputElement) {
  OpCost c = op_cost(Op("ConvTranspose", {T({1, 32, 8, 8}), T({32, 16, 4, 4}, true)},
                        {T({1, 16, 16, 16})}, {{"strides", {2, 2}}}));
  EXPECT_DOUBLE_EQ(c.flops, 2.0 * 32 * 8 * 8 * 16 * 16);
}

TEST(OpCostsTest, Gemm) {
  OpCost c = op_cost(Op("Gemm", {T({8, 512}), T({1000, 512}, true), T({1000}, true)},
                        {T({8, 1000})}, {{"transB", {1}}}));
  EXPECT_DOUBLE_EQ(c.flops, 2.0 * 8 * 1000 * 512 + 8 * 1000);
  EXPECT_DOUBLE_EQ(c.param_bytes, (512.0 * 1000 + 1000) * 4);
  OpCost trans_a =
      op_cost(Op("Gemm", {T({512, 8}), T({512, 1000}, true)}, {T({8, 1000})}, {{"transA", {1}}}));
  EXPECT_DOUBLE_EQ(trans_a.flops, 2.0 * 8 * 1000 * 512);
}

TEST(OpCostsTest, BatchedAndBroadcastMatMul) {
  OpCost batched =
      op_cost(Op("MatMul", {T({2, 8, 64, 32}), T({2, 8, 32, 64})}, {T({2, 8, 64, 64})}));
  EXPECT_DOUBLE_EQ(batched.flops, 2.0 * 2 * 8 * 64 * 64 * 32);
  EXPECT_DOUBLE_EQ(batched.param_bytes, 0);
  OpCost broadcast = op_cost(Op("MatMul", {T({4, 16, 32}), T({32, 8}, true)}, {T({4, 16, 8})}));
  EXPECT_DOUBLE_EQ(broadcast.flops, 2.0 * 4 * 16 * 8 * 32);
  EXPECT_DOUBLE_EQ(broadcast.param_bytes, 32.0 * 8 * 4);
}

TEST(OpCostsTest, Normalization) {
  double n = 2 * 64 * 10 * 10;
  std::vector<TensorInfo> bn_in = {T({2, 64, 10, 10}), T({64}, true), T({64}, true), T({64}, true),
                                   T({64}, true)};
  EXPECT_DOUBLE_EQ(op_cost(Op("BatchNormalization", bn_in, {T({2, 64, 10, 10})})).flops, 2 * n);
  EXPECT_DOUBLE_EQ(
      op_cost(Op("BatchNormalization", bn_in, {T({2, 64, 10, 10})}, {{"training_mode", {1}}}))
          .flops,
      7 * n);
  EXPECT_DOUBLE_EQ(op_cost(Op("BatchNormalization", bn_in, {T({2, 64, 10, 10})})).param_bytes,
                   4 * 64 * 4);
  EXPECT_DOUBLE_EQ(
      op_cost(Op("LayerNormalization", {T({16, 256}), T({256}, true)}, {T({16, 256})})).flops,
      7.0 * 16 * 256);
}

TEST(OpCostsTest, Pooling) {
  OpCost max = op_cost(Op("MaxPool", {T({1, 64, 112, 112})}, {T({1, 64, 56, 56})},
                          {{"kernel_shape", {3, 3}}, {"strides", {2, 2}}}));
  EXPECT_DOUBLE_EQ(max.flops, 9.0 * 64 * 56 * 56);
  EXPECT_DOUBLE_EQ(max.act_bytes, (64.0 * 112 * 112 + 64 * 56 * 56) * 4);
  OpCost avg =
      op_cost(Op("AveragePool", {T({1, 8, 8, 8})}, {T({1, 8, 4, 4})}, {{"kernel_shape", {2, 2}}}));
  EXPECT_DOUBLE_EQ(avg.flops, 4.0 * 8 * 4 * 4);
  OpCost global = op_cost(Op("GlobalAveragePool", {T({1, 2048, 7, 7})}, {T({1, 2048, 1, 1})}));
  EXPECT_DOUBLE_EQ(global.flops, 2048.0 * 49);
}

TEST(OpCostsTest, ElementWise) {
  OpCost add = op_cost(Op("Add", {T({2, 3, 4}), T({4}, true)}, {T({2, 3, 4})}));
  EXPECT_DOUBLE_EQ(add.flops, 24);
  EXPECT_DOUBLE_EQ(add.act_bytes, (24 + 24) * 4);
  EXPECT_DOUBLE_EQ(add.param_bytes, 4 * 4);
  EXPECT_DOUBLE_EQ(op_cost(Op("Relu", {T({10})}, {T({10})})).flops, 10);
  EXPECT_DOUBLE_EQ(op_cost(Op("Sigmoid", {T({10})}, {T({10})})).flops, 40);
  EXPECT_DOUBLE_EQ(op_cost(Op("Sum", {T({10}), T({10}), T({10})}, {T({10})})).flops, 20);
}

TEST(OpCostsTest, ConcatMovesBytesWithoutFlops) {
  OpCost c = op_cost(
      Op("Concat", {T({1, 64, 8, 8}), T({1, 32, 8, 8})}, {T({1, 96, 8, 8})}, {{"axis", {1}}}));
  EXPECT_DOUBLE_EQ(c.flops, 0);
  EXPECT_DOUBLE_EQ(c.act_bytes, 2.0 * 96 * 64 * 4);
}

TEST(OpCostsTest, Softmax) {
  EXPECT_DOUBLE_EQ(op_cost(Op("Softmax", {T({8, 64, 64})}, {T({8, 64, 64})})).flops,
                   8.0 * 8 * 64 * 64);
  EXPECT_DOUBLE_EQ(op_cost(Op("LogSoftmax", {T({4, 10})}, {T({4, 10})})).flops, 8.0 * 40);
}

TEST(OpCostsTest, ReduceReadsEveryInputElement) {
  EXPECT_DOUBLE_EQ(
      op_cost(Op("ReduceMean", {T({64, 1, 256})}, {T({64, 1, 1})}, {{"axes", {-1}}})).flops,
      64.0 * 256);
}

TEST(OpCostsTest, LstmAndGruCountEveryStepAndDirection) {
  // T=10 steps, batch 2, input 16, hidden 32.
  auto per_step = [](double gates, double cell) {
    return 2 * gates * 32 * (16 + 32) + 2 * gates * 32 + cell * 32;
  };
  OpCost lstm =
      op_cost(Op("LSTM", {T({10, 2, 16}), T({1, 128, 16}, true), T({1, 128, 32}, true)},
                 {T({10, 1, 2, 32}), T({1, 2, 32}), T({1, 2, 32})}, {{"hidden_size", {32}}}));
  EXPECT_DOUBLE_EQ(lstm.flops, 10 * 2 * per_step(4, 24));
  EXPECT_DOUBLE_EQ(lstm.param_bytes, (128.0 * 16 + 128 * 32) * 4);
  OpCost gru = op_cost(Op("GRU", {T({10, 2, 16}), T({2, 96, 16}, true), T({2, 96, 32}, true)},
                          {T({10, 2, 2, 32})}, {{"hidden_size", {32}}}));
  EXPECT_DOUBLE_EQ(gru.flops, 2 * 10 * 2 * per_step(3, 17));  // bidirectional
  OpCost batch_first =
      op_cost(Op("LSTM", {T({2, 10, 16}), T({1, 128, 16}, true), T({1, 128, 32}, true)},
                 {T({2, 10, 1, 32})}, {{"hidden_size", {32}}, {"layout", {1}}}));
  EXPECT_DOUBLE_EQ(batch_first.flops, lstm.flops);
}

TEST(OpCostsTest, AttentionPieces) {
  // Scaled dot-product attention, batch 2, 8 heads, 64 tokens, head size 32.
  OpCost split_heads =
      op_cost(Op("Transpose", {T({2, 64, 8, 32})}, {T({2, 8, 64, 32})}, {{"perm", {0, 2, 1, 3}}}));
  EXPECT_DOUBLE_EQ(split_heads.flops, 0);
  EXPECT_DOUBLE_EQ(split_heads.act_bytes, 2.0 * 2 * 64 * 8 * 32 * 4);
  OpCost scores =
      op_cost(Op("MatMul", {T({2, 8, 64, 32}), T({2, 8, 32, 64})}, {T({2, 8, 64, 64})}));
  EXPECT_DOUBLE_EQ(scores.flops, 2.0 * 2 * 8 * 64 * 64 * 32);
  OpCost scale = op_cost(Op("Div", {T({2, 8, 64, 64}), T({})}, {T({2, 8, 64, 64})}));
  EXPECT_DOUBLE_EQ(scale.flops, 2.0 * 8 * 64 * 64);
  OpCost probs = op_cost(Op("Softmax", {T({2, 8, 64, 64})}, {T({2, 8, 64, 64})}));
  EXPECT_DOUBLE_EQ(probs.flops, 8.0 * 2 * 8 * 64 * 64);
  OpCost context =
      op_cost(Op("MatMul", {T({2, 8, 64, 64}), T({2, 8, 64, 32})}, {T({2, 8, 64, 32})}));
  EXPECT_DOUBLE_EQ(context.flops, 2.0 * 2 * 8 * 64 * 32 * 64);
}

TEST(OpCostsTest, EmbeddingGatherReadsOnlyTheSelectedRows) {
  OpCost c = op_cost(Op("Gather", {T({1000, 256}, true), T({32, 1}, false, 8)}, {T({32, 1, 256})}));
  EXPECT_DOUBLE_EQ(c.flops, 0);
  EXPECT_DOUBLE_EQ(c.param_bytes, 32.0 * 256 * 4);
  EXPECT_DOUBLE_EQ(c.act_bytes, 32.0 * 256 * 4 + 32 * 8);
}

TEST(OpCostsTest, ViewsAreFree) {
  OpCost c = op_cost(Op("Reshape", {T({2, 3, 4}), T({2}, false, 8)}, {T({6, 4})}));
  EXPECT_DOUBLE_EQ(c.flops, 0);
  EXPECT_DOUBLE_EQ(c.act_bytes, 0);
  EXPECT_TRUE(is_alias_op("Identity"));
  EXPECT_FALSE(is_alias_op("Reshape"));
}

TEST(OpCostsTest, UnknownOpTypesUseTheFallback) {
  OpSpec op = Op("FancyOp", {T({4, 4})}, {T({4, 8})});
  EXPECT_FALSE(has_cost_rule("FancyOp"));
  OpCost c = op_cost(op);
  EXPECT_TRUE(c.fallback);
  EXPECT_DOUBLE_EQ(c.flops, 32);
  EXPECT_DOUBLE_EQ(c.act_bytes, (16 + 32) * 4);
  // A known name in another domain is not the ONNX op.
  op.op_type = "Conv";
  op.domain = "com.example";
  EXPECT_TRUE(op_cost(op).fallback);
  EXPECT_TRUE(has_cost_rule("Conv", "ai.onnx"));
}

TEST(OpCostsTest, UnknownShapesCostNothing) {
  TensorInfo unknown;
  OpCost c = op_cost(Op("Relu", {unknown}, {unknown}));
  EXPECT_DOUBLE_EQ(c.flops, 0);
  EXPECT_DOUBLE_EQ(c.act_bytes, 0);
}

}  // namespace
}  // namespace placeto
