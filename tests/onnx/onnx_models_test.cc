// `placeto import` on real models that Debian's python3-torch exported during this test run
// (the onnx_models fixture runs tests/onnx/export_models.py): the executable runs as a real
// process, its JSON summary and graph file are read back.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <sys/wait.h>

#include <cmath>
#include <cstdio>
#include <set>

#include "common/files.h"
#include "common/json_util.h"
#include "sim/cluster.h"
#include "sim/graph_io.h"
#include "sim/simulator.h"

namespace placeto {
namespace {

const std::string kModels = PLACETO_ONNX_MODELS;

struct ImportRun {
  int status = -1;
  Json summary;
  std::string graph_path;
};

ImportRun Import(const std::string& model, const std::string& tag, const std::string& flags = "") {
  ImportRun r;
  r.graph_path = kModels + "/" + tag + ".json";
  std::string cmd = std::string(PLACETO_BIN_DIR) + "/placeto import " + model + " --out " +
                    r.graph_path + " " + flags;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  std::string out;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  r.status = pclose(p);
  if (WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0) r.summary = Json::parse(out);
  return r;
}

std::string Model(const std::string& name) { return kModels + "/" + name + ".onnx"; }

double RelErr(double got, double want) { return std::abs(got / want - 1); }

// Checks what every import of a real model must satisfy and returns the summary.
Json ImportChecked(const std::string& name, const std::string& flags = "") {
  ImportRun r = Import(Model(name), name + (flags.empty() ? "" : "_flags"), flags);
  EXPECT_EQ(r.status, 0) << name;
  if (r.status != 0) return Json{};
  const Json& s = r.summary;
  EXPECT_LE(s["fallback_share"].get<double>(), 0.02) << name << ": " << s.dump();
  EXPECT_EQ(s["unknown_shape_ops"].get<int>(), 0) << name;
  // The graph file reads back, simulates, and names every op after an ONNX node or input.
  Graph g = load_graph(r.graph_path);
  EXPECT_EQ(g.num_nodes(), s["ops"].get<int>());
  onnx::ModelProto m;
  EXPECT_TRUE(m.ParseFromString(read_file(Model(name))));
  std::set<std::string> onnx_names;
  for (const auto& n : m.graph().node()) onnx_names.insert(n.name());
  for (const auto& in : m.graph().input()) onnx_names.insert(in.name());
  for (NodeId v = 0; v < g.num_nodes(); ++v) {
    std::string fwd = g.node_name(v);
    for (const std::string suffix : {"/grad", "/update"})
      if (fwd.size() > suffix.size() &&
          fwd.compare(fwd.size() - suffix.size(), suffix.size(), suffix) == 0)
        fwd.resize(fwd.size() - suffix.size());
    EXPECT_TRUE(onnx_names.count(fwd)) << name << ": " << g.node_name(v);
  }
  Cluster c = default_cluster(1);
  Simulator sim(g, c);
  const SimResult& res = sim.simulate(Placement(1, g.num_nodes()));
  EXPECT_GE(res.runtime_us, s["total_cost_us"].get<double>() * 0.999) << name;
  return s;
}

TEST(OnnxModelsTest, ResNet50MatchesItsPublishedFlops) {
  Json s = ImportChecked("resnet50");
  // 4.1 G multiply-adds per 224x224 image (He et al. 2016; torchvision lists 4.09).
  EXPECT_LT(RelErr(s["total_flops"].get<double>(), 2 * 4.09e9), 0.03) << s.dump();
  // 25.56 M parameters; folding BatchNorm into the convolutions drops the 26,560 scales.
  EXPECT_LT(RelErr(s["param_bytes"].get<double>(), 4 * 25.557e6), 0.01) << s.dump();
}

TEST(OnnxModelsTest, InceptionV3MatchesItsPublishedFlops) {
  Json s = ImportChecked("inception_v3");
  // torchvision lists 5.71 G multiply-adds at 299x299 and 27.16 M parameters (23.83 M
  // without the auxiliary classifier, left out here).
  EXPECT_LT(RelErr(s["total_flops"].get<double>(), 2 * 5.71e9), 0.03) << s.dump();
  EXPECT_LT(RelErr(s["param_bytes"].get<double>(), 4 * 23.83e6), 0.01) << s.dump();
}

TEST(OnnxModelsTest, TransformerEncoderMatchesTheAnalyticCount) {
  Json s = ImportChecked("transformer");
  // 4 layers, 64 tokens, d_model 256, feed-forward 1024: projections, scores, context, FFN.
  double S = 64, d = 256, ff = 1024;
  double per_layer = 2 * (S * d * 3 * d + 2 * S * S * d + S * d * d + 2 * S * d * ff);
  EXPECT_LT(RelErr(s["total_flops"].get<double>(), 4 * per_layer), 0.03) << s.dump();
  // ONNX 1.12 leaves the q/k/v Slice outputs unknown; the importer's own rules fill them.
  EXPECT_GT(s["own_inferred_tensors"].get<int>(), 0);
}

TEST(OnnxModelsTest, LstmSeq2SeqMatchesTheAnalyticCount) {
  Json s = ImportChecked("seq2seq");
  // 2-layer LSTM encoder and decoder (embedding 256, hidden 512), 32 steps, vocabulary 1000.
  double T = 32, h = 512, e = 256;
  double lstm = 2 * 4 * h * ((e + h) + (h + h)) * T;
  double proj = 2 * T * h * 1000;
  EXPECT_LT(RelErr(s["total_flops"].get<double>(), 2 * lstm + proj), 0.03) << s.dump();
}

TEST(OnnxModelsTest, ExportsWithWeightsImportLikeExportsWithout) {
  for (const std::string name : {"transformer", "seq2seq"}) {
    Json without = ImportChecked(name);
    ImportRun with = Import(kModels + "/params/" + name + ".onnx", name + "_params");
    ASSERT_EQ(with.status, 0) << name;
    EXPECT_EQ(with.summary["ops"], without["ops"]) << name;
    EXPECT_DOUBLE_EQ(with.summary["total_flops"].get<double>(),
                     without["total_flops"].get<double>());
    EXPECT_EQ(with.summary["param_bytes"], without["param_bytes"]) << name;
  }
}

TEST(OnnxModelsTest, TrainingGraphOfResNet50) {
  Json fwd = ImportChecked("resnet50");
  Json s = ImportChecked("resnet50", "--training --batch 32 --profile v100");
  // Backward costs 2x the forward for ops with weights: about 3x in all, times the batch.
  double ratio = s["total_flops"].get<double>() / (32 * fwd["total_flops"].get<double>());
  EXPECT_GT(ratio, 2.8);
  EXPECT_LT(ratio, 3.05);
  EXPECT_EQ(s["param_bytes"], fwd["param_bytes"]);  // moved to the updates, not copied
  Graph g = load_graph(kModels + "/resnet50_flags.json");
  int updates = 0;
  for (NodeId v = 0; v < g.num_nodes(); ++v)
    updates += g.node_name(v).size() > 7 &&
               g.node_name(v).compare(g.node_name(v).size() - 7, 7, "/update") == 0;
  EXPECT_EQ(updates, 54);  // 53 convolutions and the classifier
}

TEST(OnnxModelsTest, BadFileIsAnErrorNamingIt) {
  std::string path = kModels + "/not_a_model.onnx";
  write_file_atomic(path, "not a model\n");
  ImportRun r = Import(path, "bad");
  EXPECT_TRUE(WIFEXITED(r.status));
  EXPECT_EQ(WEXITSTATUS(r.status), 2);
}

}  // namespace
}  // namespace placeto
