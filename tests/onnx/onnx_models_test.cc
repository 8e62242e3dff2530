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
#include "sim/coarse_map.h"
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

// Output of a placeto command line, or "" (and a test failure) when it fails.
std::string RunPlaceto(const std::string& args) {
  FILE* p = popen((std::string(PLACETO_BIN_DIR) + "/placeto " + args).c_str(), "r");
  if (!p) return "";
  std::string out;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  const int status = pclose(p);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << args << "\n" << out;
  return out;
}

// `import --groups`: coarse graph, full graph and map; `place --ungroup`: the coarse
// placement mapped back to every op and to the ONNX nodes, backward ops included.
TEST(OnnxModelsTest, GroupedImportMapsPlacementsBackToOnnxNodes) {
  const std::string coarse_path = kModels + "/resnet50_g40.json";
  Json s = Json::parse(RunPlaceto("import --model " + Model("resnet50") + " --out " + coarse_path +
                                  " --training --batch 32 --groups 40"));
  ASSERT_EQ(s["fine_graph"], kModels + "/resnet50_g40.fine.json");
  ASSERT_EQ(s["map"], kModels + "/resnet50_g40.map.json");
  const Graph coarse = load_graph(coarse_path);
  const Graph fine = load_graph(s["fine_graph"].get<std::string>());
  EXPECT_LE(coarse.num_nodes(), 40);
  EXPECT_EQ(s["groups"], coarse.num_nodes());
  EXPECT_EQ(fine.num_nodes(), s["ops"].get<int>());
  EXPECT_LT(s["cut_bytes"].get<int64_t>(), s["chunked_cut_bytes"].get<int64_t>());

  // Every op's origin is the ONNX node (by index and name) or graph input it comes from.
  const CoarseMap map = read_coarse_map(s["map"].get<std::string>(), fine);
  ASSERT_EQ(static_cast<int>(map.origins.size()), fine.num_nodes());
  onnx::ModelProto m;
  ASSERT_TRUE(m.ParseFromString(read_file(Model("resnet50"))));
  std::set<std::string> inputs;
  for (const auto& in : m.graph().input()) inputs.insert(in.name());
  int grads = 0, updates = 0;
  for (NodeId v = 0; v < fine.num_nodes(); ++v) {
    const OpOrigin& o = map.origins[v];
    const std::string& op = fine.node_name(v);
    if (o.role == OpRole::kInput) {
      EXPECT_TRUE(inputs.count(o.name)) << op;
      continue;
    }
    ASSERT_GE(o.node, 0) << op;
    ASSERT_LT(o.node, m.graph().node_size()) << op;
    EXPECT_EQ(m.graph().node(o.node).name(), o.name) << op;
    const std::string suffix = o.role == OpRole::kGrad     ? "/grad"
                               : o.role == OpRole::kUpdate ? "/update"
                                                           : "";
    EXPECT_EQ(op, o.name + suffix);  // torch names every node, uniquely
    grads += o.role == OpRole::kGrad;
    updates += o.role == OpRole::kUpdate;
  }
  EXPECT_GT(grads, 100);
  EXPECT_EQ(updates, 54);

  const std::string out =
      RunPlaceto("place --graph " + coarse_path + " --devices 3 --method round-robin --out " +
                 kModels + "/resnet50_g40_p.json --ungroup " + s["fine_graph"].get<std::string>());
  const Json placed = Json::parse(out);
  EXPECT_GT(placed["fine"]["runtime_us"].get<double>(), 0);
  const Json doc = parse_json_file(kModels + "/resnet50_g40_p.fine.json");
  const Placement p = placement_from_json(doc, fine, "fine placement");  // every op placed
  const Placement cp = load_placement(kModels + "/resnet50_g40_p.json", coarse);
  // Per ONNX node: its forward, backward and update ops' devices, under its own name.
  int entries_with_grad = 0;
  std::set<int> seen;
  for (const Json& e : doc["onnx_nodes"]) {
    const NodeId fwd = fine.find(e["op"].get<std::string>());
    ASSERT_GE(fwd, 0) << e.dump();
    EXPECT_EQ(e["forward"], p.device[fwd]);
    if (e.contains("input")) continue;
    EXPECT_TRUE(seen.insert(e["node"].get<int>()).second) << e.dump();
    EXPECT_EQ(e["name"], m.graph().node(e["node"].get<int>()).name());
    for (const std::string role : {"grad", "update"})
      if (e.contains(role)) {
        const NodeId v = fine.find(e["op"].get<std::string>() + "/" + role);
        ASSERT_GE(v, 0) << e.dump();
        EXPECT_EQ(e[role], p.device[v]);
        EXPECT_EQ(e[role], cp.device[map.group[v]]);
      }
    entries_with_grad += e.contains("grad");
  }
  EXPECT_EQ(entries_with_grad, grads);
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
