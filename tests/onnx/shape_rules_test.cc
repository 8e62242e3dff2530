// The importer's own shape propagation (sim/onnx/shape_rules.h).
#include "sim/onnx/shape_rules.h"

#include <gtest/gtest.h>

namespace placeto {
namespace {

TensorInfo T(std::vector<int64_t> shape, int64_t elem_bytes = 4) {
  TensorInfo t;
  t.known = true;
  t.shape = std::move(shape);
  t.elem_bytes = elem_bytes;
  return t;
}

OpSpec Op(std::string type, std::vector<TensorInfo> in, int outputs = 1,
          std::map<std::string, std::vector<int64_t>> ints = {}) {
  OpSpec op;
  op.op_type = std::move(type);
  op.inputs = std::move(in);
  op.outputs.resize(outputs);
  op.attrs.ints = std::move(ints);
  return op;
}

std::vector<int64_t> V(std::initializer_list<int64_t> v) { return v; }

TEST(ShapeRulesTest, FoldsTheShapeArithmeticOfATransformerSlice) {
  // Shape -> Gather(2) -> Add(2) -> Div(3) -> Mul(2): the end of the second of three slices.
  TensorInfo qkv = T({64, 1, 768});
  auto shape = evaluate_static(Op("Shape", {qkv}), {std::nullopt})[0];
  ASSERT_TRUE(shape);
  EXPECT_EQ(*shape, V({64, 1, 768}));
  auto last = evaluate_static(Op("Gather", {T({3}, 8), T({}, 8)}), {shape, V({2})})[0];
  ASSERT_TRUE(last);
  auto third = evaluate_static(Op("Div", {T({}, 8), T({}, 8)}), {last, V({3})})[0];
  auto end = evaluate_static(Op("Mul", {T({}, 8), T({}, 8)}), {third, V({2})})[0];
  ASSERT_TRUE(end);
  EXPECT_EQ(*end, V({512}));
  OpSpec slice = Op("Slice", {qkv, T({1}, 8), T({1}, 8), T({1}, 8)});
  infer_missing_shapes(slice, {std::nullopt, V({256}), end, V({-1})});
  ASSERT_TRUE(slice.outputs[0].known);
  EXPECT_EQ(slice.outputs[0].shape, V({64, 1, 256}));
}

TEST(ShapeRulesTest, SliceWithStepsAndClamping) {
  OpSpec slice = Op("Slice", {T({10, 20}), T({2}, 8), T({2}, 8), T({2}, 8), T({2}, 8)});
  infer_missing_shapes(slice,
                       {std::nullopt, V({0, -1}), V({INT64_MAX, -100}), V({0, 1}), V({3, -2})});
  ASSERT_TRUE(slice.outputs[0].known);
  EXPECT_EQ(slice.outputs[0].shape, V({4, 10}));
}

TEST(ShapeRulesTest, ExpandReshapeUnsqueezeSqueeze) {
  OpSpec expand = Op("Expand", {T({1, 1, 512}), T({3}, 8)});
  infer_missing_shapes(expand, {std::nullopt, V({2, 1, 512})});
  EXPECT_EQ(expand.outputs[0].shape, V({2, 1, 512}));
  OpSpec reshape = Op("Reshape", {T({64, 1, 256}), T({3}, 8)});
  infer_missing_shapes(reshape, {std::nullopt, V({0, 8, -1})});
  EXPECT_EQ(reshape.outputs[0].shape, V({64, 8, 32}));
  OpSpec unsqueeze = Op("Unsqueeze", {T({3, 4}), T({2}, 8)});
  infer_missing_shapes(unsqueeze, {std::nullopt, V({0, -1})});
  EXPECT_EQ(unsqueeze.outputs[0].shape, V({1, 3, 4, 1}));
  OpSpec squeeze = Op("Squeeze", {T({1, 3, 1, 4})});
  infer_missing_shapes(squeeze, {std::nullopt});
  EXPECT_EQ(squeeze.outputs[0].shape, V({3, 4}));
}

TEST(ShapeRulesTest, MatMulBroadcastAndTranspose) {
  OpSpec mm = Op("MatMul", {T({8, 1, 64, 32}), T({4, 32, 16})});
  infer_missing_shapes(mm, {std::nullopt, std::nullopt});
  EXPECT_EQ(mm.outputs[0].shape, V({8, 4, 64, 16}));
  OpSpec tr = Op("Transpose", {T({2, 3, 4})}, 1, {{"perm", {1, 0, 2}}});
  infer_missing_shapes(tr, {std::nullopt});
  EXPECT_EQ(tr.outputs[0].shape, V({3, 2, 4}));
  EXPECT_FALSE(broadcast_shapes({2, 3}, {4, 3, 2}).has_value());
  EXPECT_EQ(*broadcast_shapes({2, 1}, {4, 1, 5}), V({4, 2, 5}));
}

TEST(ShapeRulesTest, UnfoldableInputsLeaveTheShapeUnknown) {
  OpSpec slice = Op("Slice", {T({10}), T({1}, 8), T({1}, 8)});
  infer_missing_shapes(slice, {std::nullopt, std::nullopt, V({4})});
  EXPECT_FALSE(slice.outputs[0].known);
}

TEST(ShapeRulesTest, SplitConcatReduce) {
  OpSpec split = Op("Split", {T({6, 4})}, 3);
  infer_missing_shapes(split, {std::nullopt});
  for (const TensorInfo& t : split.outputs) EXPECT_EQ(t.shape, V({2, 4}));
  OpSpec concat = Op("Concat", {T({2, 4}), T({2, 5})}, 1, {{"axis", {-1}}});
  infer_missing_shapes(concat, {std::nullopt, std::nullopt});
  EXPECT_EQ(concat.outputs[0].shape, V({2, 9}));
  OpSpec mean = Op("ReduceMean", {T({64, 1, 256})}, 1, {{"axes", {-1}}});
  infer_missing_shapes(mean, {std::nullopt});
  EXPECT_EQ(mean.outputs[0].shape, V({64, 1, 1}));
}

}  // namespace
}  // namespace placeto
