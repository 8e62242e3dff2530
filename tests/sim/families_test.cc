// Graph families: deterministic files, valid graphs, training structure (a gradient op per
// op on the path to the loss, an update per parameter, backward about twice the forward),
// sizes, architectures that vary, and manifest errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <vector>

#include "common/error.h"
#include "common/files.h"
#include "sim/cost_model.h"
#include "sim/families/family.h"
#include "sim/families/training_graph.h"
#include "sim/graph_io.h"

namespace placeto {
namespace {

std::string temp_dir(const std::string& name) {
  auto p = std::filesystem::temp_directory_path() / ("placeto_fam_" + name);
  std::filesystem::remove_all(p);
  return p.string();
}

std::string slurp_dir(const std::string& dir, int count, const std::string& family) {
  std::string all = read_file(dir + "/manifest.json");
  for (int i = 0; i < count; ++i)
    all += read_file(dir + "/" + family + "_" + std::to_string(i) + ".json");
  return all;
}

class FamilyTest : public ::testing::TestWithParam<std::string> {};

TEST_P(FamilyTest, SameSeedGivesByteIdenticalFilesAndValidGraphs) {
  const std::string family = GetParam();
  FamilySpec spec;
  spec.family = family;
  const std::string a = temp_dir(family + "_a"), b = temp_dir(family + "_b"),
                    c = temp_dir(family + "_c");
  FamilyManifest m = generate_family(spec, 8, 42, a, 2);
  generate_family(spec, 8, 42, b, 2);
  generate_family(spec, 8, 43, c, 2);
  EXPECT_EQ(slurp_dir(a, 8, family), slurp_dir(b, 8, family));
  EXPECT_NE(slurp_dir(a, 8, family), slurp_dir(c, 8, family));
  EXPECT_EQ(m.train.size(), 6u);
  EXPECT_EQ(m.test.size(), 2u);

  FamilyManifest back = load_family_manifest(a);
  EXPECT_EQ(back.family, family);
  EXPECT_EQ(back.seed, 42u);
  EXPECT_EQ(back.train, m.train);
  EXPECT_EQ(back.test, m.test);
  std::set<std::string> shapes;
  for (const auto& path : manifest_paths(a, back.train)) {
    Graph g = load_graph(path);  // validates: acyclic, sizes, edges
    EXPECT_GE(g.num_nodes(), 150) << path;
    EXPECT_LE(g.num_nodes(), 500) << path;
    std::string shape;
    for (EdgeId e = 0; e < g.num_edges(); ++e)
      shape += g.node_name(g.edge_src(e)) + ">" + g.node_name(g.edge_dst(e)) + ";";
    shapes.insert(shape);
  }
  // Architectures vary from graph to graph.
  EXPECT_GE(shapes.size(), 5u);
}

TEST_P(FamilyTest, TrainingStructure) {
  FamilySpec spec;
  spec.family = GetParam();
  Graph g = generate_graph(spec, 3, 9);
  double forward = 0, backward = 0;
  int grads = 0, updates = 0;
  for (NodeId v = 0; v < g.num_nodes(); ++v) {
    const std::string& name = g.node_name(v);
    const bool is_grad = name.size() > 5 && name.compare(name.size() - 5, 5, "/grad") == 0;
    const bool is_update = g.op_type(v) == "ApplyMomentum";
    if (is_grad) {
      ++grads;
      backward += g.cost_us(v);
      // The gradient op reads its op's saved output.
      const NodeId fwd = g.find(name.substr(0, name.size() - 5));
      ASSERT_GE(fwd, 0) << name;
      bool reads = false;
      for (int i = g.parent_begin(v); i < g.parent_end(v); ++i)
        reads = reads || g.edge_src(g.parent_edges()[i]) == fwd;
      EXPECT_TRUE(reads) << name;
      forward += g.cost_us(fwd);
    }
    if (is_update) {
      ++updates;
      EXPECT_EQ(g.out_degree(v), 0);
      EXPECT_GE(g.in_degree(v), 1);
    }
    // Every op holding parameters has an update op (directly or after a gradient sum).
    if (g.param_bytes(v) > 0) {
      EXPECT_GE(g.find(name + "/update"), 0) << name;
    }
  }
  EXPECT_GT(grads, g.num_nodes() / 4);
  EXPECT_GT(updates, 5);
  EXPECT_GT(backward / forward, 1.6);
  EXPECT_LT(backward / forward, 2.1);
}

INSTANTIATE_TEST_SUITE_P(Families, FamilyTest, ::testing::Values("cifar10", "ptb", "nmt"));

TEST(TrainingGraph, GradientsFollowTheForwardGraph) {
  // x (data) -> a (weights) -> b -> loss; a's weights are its own, b uses a shared variable.
  TrainingGraphBuilder tb("tiny", device_profile("k80"));
  const int x = tb.add_op("x", "Input", 0, 400, 100, {}, 0, false);
  const int a = tb.add_op("a", "Dense", 1e6, 1000, 200, {x}, 64);
  const int w = tb.add_variable("w", 32);
  const int b = tb.add_op("b", "Dense", 1e6, 1000, 300, {a});
  tb.use_variable(b, w);
  const int loss = tb.add_op("loss", "Sum", 10, 10, 4, {b});
  tb.set_loss(loss);
  Graph g = tb.build();
  EXPECT_LT(g.find("x/grad"), 0);  // not differentiable
  const NodeId ga = g.find("a/grad"), gb = g.find("b/grad");
  ASSERT_GE(ga, 0);
  ASSERT_GE(gb, 0);
  // b/grad sends a's input gradient (200 bytes, output 0) to a/grad; a/grad only has the
  // weight gradient (its input x needs none).
  EXPECT_EQ(g.out_bytes(gb, 0), 200);
  EXPECT_EQ(g.out_bytes(gb, 1), 32);
  EXPECT_EQ(g.num_outputs(ga), 1);
  EXPECT_EQ(g.out_bytes(ga, 0), 64);
  EXPECT_GE(g.find("a/update"), 0);
  EXPECT_GE(g.find("w/update"), 0);
  EXPECT_LT(g.find("w/grad_sum"), 0);  // one user: no sum
  EXPECT_EQ(g.param_bytes(g.find("w")), 32);
  EXPECT_EQ(g.param_bytes(g.find("a")), 64);
  EXPECT_NEAR(g.cost_us(gb) - device_profile("k80").launch_overhead_us,
              2 * (g.cost_us(g.find("b")) - device_profile("k80").launch_overhead_us), 1e-9);
}

TEST(FamilyManifest, BadManifestsNameTheFileAndField) {
  const std::string dir = temp_dir("bad");
  make_directories(dir);
  auto error_of = [&](const std::string& text) -> std::string {
    write_file_atomic(dir + "/manifest.json", text);
    try {
      load_family_manifest(dir);
    } catch (const InputError& e) {
      return e.what();
    }
    return "";
  };
  const std::string head = R"({"format": "placeto-family", "version": 1, "family": "ptb", )";
  std::string e =
      error_of(head + R"("seed": 1, "count": 3, "train": ["a.json"], "test": ["b.json"]})");
  EXPECT_NE(e.find("manifest.json"), std::string::npos) << e;
  EXPECT_NE(e.find("count"), std::string::npos) << e;
  e = error_of(head + R"("seed": -4, "count": 1, "train": ["a.json"], "test": []})");
  EXPECT_NE(e.find("seed"), std::string::npos) << e;
  e = error_of(head + R"("seed": 1, "count": 1, "train": ["../x.json"], "test": []})");
  EXPECT_NE(e.find("train[0]"), std::string::npos) << e;
  e = error_of(R"({"format": "placeto-graph", "version": 1})");
  EXPECT_NE(e.find("format"), std::string::npos) << e;
  e = error_of("{");
  EXPECT_NE(e.find("manifest.json"), std::string::npos) << e;
  EXPECT_THROW(load_family_manifest(dir + "/missing"), InputError);
}

TEST(FamilySpec, UnknownFamilyAndProfileAreInputErrors) {
  FamilySpec s;
  s.family = "imagenet";
  EXPECT_THROW(generate_graph(s, 0, 1), InputError);
  s.family = "ptb";
  s.profile = "tpu";
  EXPECT_THROW(generate_graph(s, 0, 1), InputError);
}

}  // namespace
}  // namespace placeto

namespace placeto {
namespace {

// The evaluation-only linalg family: deterministic, three kinds of task graph, 35-288 tasks,
// one tile per edge, and a tile size and tile count the spec can fix.
TEST(LinalgFamily, TaskGraphsOfThreeKindsAndFixedSizesOnRequest) {
  FamilySpec spec;
  spec.family = "linalg";
  std::set<std::string> kinds;
  for (int i = 0; i < 24; ++i) {
    const Graph g = generate_graph(spec, i, 3);
    const Graph again = generate_graph(spec, i, 3);
    ASSERT_EQ(g.num_nodes(), again.num_nodes());
    EXPECT_GE(g.num_nodes(), 35);
    EXPECT_LE(g.num_nodes(), 288);
    kinds.insert(g.op_type(0));
    for (EdgeId e = 0; e < g.num_edges(); ++e)
      EXPECT_EQ(g.edge_bytes(e), g.total_out_bytes(g.edge_src(e)));
    for (NodeId v = 0; v < g.num_nodes(); ++v) EXPECT_EQ(g.param_bytes(v), 0);
  }
  EXPECT_EQ(kinds, (std::set<std::string>{"potrf", "getrf", "stencil"}));
  spec.width = 256;  // tile size
  spec.steps = 4;    // tiles per side
  for (int i = 0; i < 12; ++i) {
    const Graph g = generate_graph(spec, i, 5);
    EXPECT_EQ(g.total_out_bytes(0), 4 * 256 * 256);
    if (g.op_type(0) == "potrf") {
      EXPECT_EQ(g.num_nodes(), 20);  // 4 potrf, 6 trsm, 6 syrk, 4 gemm
    } else if (g.op_type(0) == "getrf") {
      EXPECT_EQ(g.num_nodes(), 30);  // sum over k of (4 - k)^2
    }
  }
  spec.width = 8;
  EXPECT_THROW(resolve_family_spec(spec), InputError);
  EXPECT_FALSE(evaluation_only_family("ptb"));
  EXPECT_TRUE(evaluation_only_family("linalg"));
}

// The layered training family: deterministic, training steps and forward dataflow graphs,
// every op on a path to the loss, compute-to-communication ratios over four decades, and a
// fixed depth and width on request.
TEST(LayeredFamily, RandomLayeredDagsOverWideRanges) {
  FamilySpec spec;
  spec.family = "layered";
  const DeviceProfile& k80 = device_profile("k80");
  int training = 0, forward = 0;
  double min_ratio = 1e9, max_ratio = 0;
  for (int i = 0; i < 40; ++i) {
    const Graph g = generate_graph(spec, i, 3);
    const Graph again = generate_graph(spec, i, 3);
    ASSERT_EQ(g.num_nodes(), again.num_nodes());
    ASSERT_EQ(g.num_edges(), again.num_edges());
    EXPECT_GE(g.num_nodes(), 6);
    EXPECT_LE(g.num_nodes(), 1200);
    bool is_training = false;
    for (NodeId v = 0; v < g.num_nodes(); ++v)
      is_training = is_training || g.node_name(v).find("/grad") != std::string::npos;
    (is_training ? training : forward)++;
    if (!is_training) {
      for (NodeId v = 0; v < g.num_nodes(); ++v)
        if (g.node_name(v) != "loss") {
          EXPECT_GE(g.out_degree(v), 1) << g.node_name(v);
        }
      // The graph's ratio: its ops' median of compute over moving their output.
      std::vector<double> r;
      for (NodeId v = 1; v + 1 < g.num_nodes(); ++v)
        r.push_back(g.cost_us(v) / (k80.intra_node_latency_us +
                                    1e6 * g.total_out_bytes(v) / k80.intra_node_bandwidth));
      if (r.empty()) continue;
      std::nth_element(r.begin(), r.begin() + r.size() / 2, r.end());
      min_ratio = std::min(min_ratio, r[r.size() / 2]);
      max_ratio = std::max(max_ratio, r[r.size() / 2]);
    }
  }
  EXPECT_GE(training, 8);
  EXPECT_GE(forward, 8);
  EXPECT_LT(min_ratio, 0.1);
  EXPECT_GT(max_ratio, 10);
  spec.steps = 5;  // depth
  spec.width = 1;  // a chain
  for (int i = 0; i < 8; ++i) {
    const Graph g = generate_graph(spec, i, 4);
    int forward_ops = 0;  // the others are gradient and update ops ("<op>/grad", ...)
    for (NodeId v = 0; v < g.num_nodes(); ++v)
      forward_ops += g.node_name(v).find('/') == std::string::npos ? 1 : 0;
    EXPECT_EQ(forward_ops, 7);  // input, 5 layers, loss
    EXPECT_GE(g.find("l5_0"), 0);
  }
  spec.width = 0;
  spec.steps = 5000;
  EXPECT_THROW(resolve_family_spec(spec), InputError);
  EXPECT_FALSE(evaluation_only_family("layered"));
}

}  // namespace
}  // namespace placeto
