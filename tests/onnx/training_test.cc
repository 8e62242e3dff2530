// Backward and update synthesis (sim/onnx/training.h).
#include "sim/onnx/training.h"

#include <gtest/gtest.h>

#include "sim/cost_model.h"

namespace placeto {
namespace {

// input -> fc (with parameters) -> relu -> loss-like op without parameters.
OpGraph Chain() {
  OpGraph g;
  g.name = "chain";
  OpNode in;
  in.name = "x";
  in.op_type = "Input";
  in.is_input = true;
  in.out_bytes = {400};
  in.origin = {OpRole::kInput, "x", -1};
  OpNode fc{"fc", "Gemm", 1e6, 1e4, {800}, 4000, false, false, {OpRole::kForward, "fc", 0}, "", {}};
  OpNode relu{"relu", "Relu", 200, 1600, {800}, 0, false, false, {OpRole::kForward, "", 1}, "", {}};
  OpNode sm{"softmax", "Softmax", 1600, 1600, {800}, 0, false, false, {OpRole::kForward, "sm", 2},
            "",        {}};
  g.nodes = {in, fc, relu, sm};
  g.edges = {{0, 1, 0}, {1, 2, 0}, {2, 3, 0}};
  return g;
}

int Find(const OpGraph& g, const std::string& name) {
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (g.nodes[i].name == name) return static_cast<int>(i);
  return -1;
}

bool HasEdge(const OpGraph& g, const std::string& a, const std::string& b, int out) {
  for (const OpEdge& e : g.edges)
    if (g.nodes[e.src].name == a && g.nodes[e.dst].name == b && e.out == out) return true;
  return false;
}

// Synthesised ops name their forward ONNX node explicitly, whatever the op names say.
TEST(TrainingTest, SynthesisedOpsCarryTheirForwardOrigin) {
  OpGraph t = add_training_ops(Chain());
  const std::vector<OpOrigin> origins = op_origins(t);
  ASSERT_EQ(origins.size(), t.nodes.size());
  const OpOrigin& fc_grad = origins[Find(t, "fc/grad")];
  EXPECT_EQ(fc_grad.role, OpRole::kGrad);
  EXPECT_EQ(fc_grad.name, "fc");
  EXPECT_EQ(fc_grad.node, 0);
  const OpOrigin& fc_update = origins[Find(t, "fc/update")];
  EXPECT_EQ(fc_update.role, OpRole::kUpdate);
  EXPECT_EQ(fc_update.node, 0);
  const OpOrigin& relu_grad = origins[Find(t, "relu/grad")];  // unnamed in the ONNX file
  EXPECT_EQ(relu_grad.role, OpRole::kGrad);
  EXPECT_EQ(relu_grad.name, "");
  EXPECT_EQ(relu_grad.node, 1);
  EXPECT_EQ(origins[Find(t, "softmax/grad")].name, "sm");
  EXPECT_EQ(origins[Find(t, "x")].role, OpRole::kInput);
}

TEST(TrainingTest, GradientsFlowInReverseAndUpdatesHoldTheParameters) {
  OpGraph t = add_training_ops(Chain());
  ASSERT_EQ(t.nodes.size(), 4u + 3 + 1);  // 3 grads (not the input), 1 update
  EXPECT_EQ(Find(t, "x/grad"), -1);
  int fc_grad = Find(t, "fc/grad"), fc_update = Find(t, "fc/update");
  ASSERT_GE(fc_grad, 0);
  ASSERT_GE(fc_update, 0);
  EXPECT_EQ(t.nodes[Find(t, "fc")].param_bytes, 0);
  EXPECT_EQ(t.nodes[fc_update].param_bytes, 4000);
  EXPECT_DOUBLE_EQ(t.nodes[fc_grad].flops, 2e6);  // parameters: 2x forward
  EXPECT_DOUBLE_EQ(t.nodes[Find(t, "relu/grad")].flops, 200);
  // fc/grad outputs: d(input) then d(weights).
  EXPECT_EQ(t.nodes[fc_grad].out_bytes, (std::vector<int64_t>{400, 4000}));
  EXPECT_TRUE(HasEdge(t, "softmax/grad", "relu/grad", 0));
  EXPECT_TRUE(HasEdge(t, "relu/grad", "fc/grad", 0));
  EXPECT_TRUE(HasEdge(t, "fc/grad", "fc/update", 1));
  EXPECT_TRUE(HasEdge(t, "x", "fc/grad", 0));   // saved input
  EXPECT_TRUE(HasEdge(t, "fc", "fc/grad", 0));  // saved output
  EXPECT_FALSE(HasEdge(t, "fc/grad", "x/grad", 0));
  // The result is a valid graph.
  Graph g = build_graph(t, device_profile("k80"), "chain");
  EXPECT_EQ(g.num_nodes(), 8);
  EXPECT_GT(g.cost_us(g.find("fc/update")), 0);
}

TEST(TrainingTest, OpsBeforeAnyParameterGetNoGradient) {
  OpGraph g = Chain();
  // A parameter-free op between the input and fc needs no gradient.
  OpNode cast{"cast", "Cast", 0, 800, {400}, 0, false, false, {}, "", {}};
  g.nodes.insert(g.nodes.begin() + 1, cast);
  g.edges = {{0, 1, 0}, {1, 2, 0}, {2, 3, 0}, {3, 4, 0}};
  OpGraph t = add_training_ops(g);
  EXPECT_EQ(Find(t, "cast/grad"), -1);
  EXPECT_GE(Find(t, "fc/grad"), 0);
}

TEST(TrainingTest, ForwardOpNameMapsSynthesisedOpsBack) {
  EXPECT_EQ(forward_op_name("/layer1/Conv/grad"), "/layer1/Conv");
  EXPECT_EQ(forward_op_name("/layer1/Conv/update"), "/layer1/Conv");
  EXPECT_EQ(forward_op_name("/layer1/Conv"), "/layer1/Conv");
}

}  // namespace
}  // namespace placeto
