// Module paths of PyTorch node names and the by-module grouping (sim/onnx/module_groups.h).
#include "sim/onnx/module_groups.h"

#include <gtest/gtest.h>

#include <map>

#include "common/error.h"

namespace placeto {
namespace {

std::vector<std::string> paths_of(const std::vector<std::string>& names) {
  std::vector<std::string> out;
  for (const ModulePath& p : module_paths(names)) out.push_back(p.scoped ? p.path : "<none>");
  return out;
}

TEST(ModulePaths, SequentialAndModuleListNames) {
  EXPECT_EQ(paths_of({"/layer1/layer1.0/conv1/Conv", "/layers.0/self_attn/MatMul", "/fc/Gemm",
                      "/layer4/layer4.0/downsample/downsample.0/Conv"}),
            (std::vector<std::string>{"layer1.0.conv1", "layers.0.self_attn", "fc",
                                      "layer4.0.downsample.0"}));
}

TEST(ModulePaths, RootOpsAndUnscopedNames) {
  EXPECT_EQ(paths_of({"/Flatten", "/LogSoftmax", "Conv_3", "", "/layers.3/norm1/Add_1"}),
            (std::vector<std::string>{"", "", "<none>", "<none>", "layers.3.norm1"}));
}

TEST(ModulePaths, RepeatedCallsAreStrippedOnlyBesideTheirModule) {
  // relu_1, relu_2 are calls 2 and 3 of "relu" in the same block; "conv_1" has no "conv"
  // sibling and is a module of its own; the suffix of the op ("Relu_1") is dropped anyway.
  EXPECT_EQ(paths_of({"/layer1/layer1.0/relu/Relu", "/layer1/layer1.0/relu_1/Relu",
                      "/layer1/layer1.0/relu_2/Relu_1", "/conv_1/Conv", "/block_1/relu_1/Relu",
                      "/block/x/Relu"}),
            (std::vector<std::string>{"layer1.0.relu", "layer1.0.relu", "layer1.0.relu", "conv_1",
                                      "block.relu_1", "block.x"}));
}

TEST(ModulePaths, Hierarchy) {
  EXPECT_EQ(parent_module("layer1.0.conv1"), "layer1.0");
  EXPECT_EQ(parent_module("fc"), "");
  EXPECT_EQ(module_depth(""), 0);
  EXPECT_EQ(module_depth("layer1.0.conv1"), 3);
  EXPECT_TRUE(module_contains("", "fc"));
  EXPECT_TRUE(module_contains("layer1", "layer1.0.conv1"));
  EXPECT_FALSE(module_contains("layer1", "layer10.conv"));
}

// A graph with its origins, built op by op.
struct TestGraph {
  GraphBuilder b{"test"};
  std::vector<OpOrigin> origins;
  int add(const std::string& onnx_name, OpRole role = OpRole::kForward) {
    std::string name = onnx_name;
    if (role == OpRole::kGrad) name += "/grad";
    if (role == OpRole::kUpdate) name += "/update";
    origins.push_back({role, onnx_name, static_cast<int>(origins.size())});
    return b.add_node(name, "Op", 1.0, {100});
  }
  void edge(int a, int c) { b.add_edge(a, c); }
};

// A ResNet bottleneck block whose relu is called three times: conv1 -> relu -> conv2 -> relu
// -> conv3 -> Add -> relu.  Module groups "relu", "conv2", "conv3" and the block's own Add form
// a cycle, which collapses the deepest modules of the cycle into the block.
TEST(GroupByModule, CycleThroughARepeatedReluCollapsesIntoTheBlock) {
  TestGraph t;
  const int in = t.add("x", OpRole::kInput);
  const int conv1 = t.add("/layer1/layer1.0/conv1/Conv");
  const int r1 = t.add("/layer1/layer1.0/relu/Relu");
  const int conv2 = t.add("/layer1/layer1.0/conv2/Conv");
  const int r2 = t.add("/layer1/layer1.0/relu_1/Relu");
  const int conv3 = t.add("/layer1/layer1.0/conv3/Conv");
  const int add = t.add("/layer1/layer1.0/Add");
  const int r3 = t.add("/layer1/layer1.0/relu_2/Relu");
  const int fc = t.add("/fc/Gemm");
  t.edge(in, conv1), t.edge(conv1, r1), t.edge(r1, conv2), t.edge(conv2, r2);
  t.edge(r2, conv3), t.edge(conv3, add), t.edge(in, add), t.edge(add, r3), t.edge(r3, fc);
  const Graph g = t.b.build();
  const ModuleGrouping m = group_by_module(g, t.origins, "model.onnx");
  std::map<std::string, std::vector<std::string>> ops_of;
  for (NodeId v = 0; v < g.num_nodes(); ++v)
    ops_of[m.labels[m.coarse.group[v]]].push_back(g.node_name(v));
  EXPECT_EQ(m.collapsed,
            (std::vector<std::string>{"layer1.0.conv2", "layer1.0.conv3", "layer1.0.relu"}));
  ASSERT_EQ(ops_of.size(), 4u);
  EXPECT_EQ(ops_of["input:x"], (std::vector<std::string>{"x"}));
  EXPECT_EQ(ops_of["layer1.0.conv1"], (std::vector<std::string>{"/layer1/layer1.0/conv1/Conv"}));
  EXPECT_EQ(ops_of["layer1.0"].size(), 6u);
  EXPECT_EQ(ops_of["fc"], (std::vector<std::string>{"/fc/Gemm"}));
  EXPECT_EQ(m.coarse.graph.num_nodes(), 4);  // build_coarse_graph accepted it: acyclic
}

TEST(GroupByModule, GradAndUpdateOpsFormAGroupPerModule) {
  TestGraph t;
  const int in = t.add("x", OpRole::kInput);
  const int a = t.add("/enc/Conv");
  const int b = t.add("/dec/Gemm");
  const int gb = t.add("/dec/Gemm", OpRole::kGrad);
  const int ub = t.add("/dec/Gemm", OpRole::kUpdate);
  const int ga = t.add("/enc/Conv", OpRole::kGrad);
  t.edge(in, a), t.edge(a, b), t.edge(b, gb), t.edge(gb, ub), t.edge(gb, ga), t.edge(a, ga);
  const Graph g = t.b.build();
  const ModuleGrouping m = group_by_module(g, t.origins, "model.onnx");
  EXPECT_TRUE(m.collapsed.empty());
  EXPECT_EQ(m.labels.size(), 5u);
  EXPECT_EQ(m.labels[m.coarse.group[gb]], "dec/grad");
  EXPECT_EQ(m.coarse.group[gb], m.coarse.group[ub]);
  EXPECT_NE(m.coarse.group[b], m.coarse.group[gb]);
  EXPECT_EQ(m.labels[m.coarse.group[ga]], "enc/grad");
}

TEST(GroupByModule, UnscopedNamesAreRefusedWithAnExample) {
  TestGraph t;
  const int in = t.add("x", OpRole::kInput);
  const int c = t.add("Conv_3");
  t.edge(in, c);
  const Graph g = t.b.build();
  try {
    group_by_module(g, t.origins, "other.onnx");
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("other.onnx"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("\"Conv_3\""), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace placeto
