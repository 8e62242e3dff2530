// `placeto generate`, `placeto coarsen` and `placeto place --ungroup` as a user runs them: real
// processes, real files.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <functional>

#include "common/files.h"
#include "common/json_util.h"
#include "sim/cluster.h"
#include "sim/coarse_map.h"
#include "sim/families/family.h"
#include "sim/graph_io.h"
#include "sim/simulator.h"

namespace placeto {
namespace {

struct ProcessResult {
  int rc;
  std::string out;
};

ProcessResult run(const std::string& args) {
  const std::string cmd = std::string(PLACETO_BIN_DIR) + "/placeto " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return {-1, ""};
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  int status = pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

// ctest runs each test case as its own process, several at once: the pid keeps their
// directories apart.
std::string temp_dir(const std::string& name) {
  auto p = std::filesystem::temp_directory_path() /
           ("placeto_cli_" + name + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(p);
  return p.string();
}

TEST(GenerateCli, WritesADeterministicFamily) {
  const std::string a = temp_dir("a"), b = temp_dir("b");
  ProcessResult ra = run("generate --family ptb --count 6 --seed 11 --steps 3 --out " + a);
  ASSERT_EQ(ra.rc, 0) << ra.out;
  ProcessResult rb = run("generate --family ptb --count 6 --seed 11 --steps 3 --out " + b);
  ASSERT_EQ(rb.rc, 0) << rb.out;
  FamilyManifest m = load_family_manifest(a);
  EXPECT_EQ(m.count, 6);
  EXPECT_EQ(m.test.size(), 1u);  // count / 4
  for (const auto& f :
       {std::string("manifest.json"), std::string("ptb_0.json"), std::string("ptb_5.json")})
    EXPECT_EQ(read_file(a + "/" + f), read_file(b + "/" + f)) << f;
  for (const auto& path : manifest_paths(a, m.train)) load_graph(path);
}

TEST(GenerateCli, RejectsBadArguments) {
  ProcessResult r = run("generate --family imagenet --count 2 --out " + temp_dir("bad"));
  EXPECT_NE(r.rc, 0);
  EXPECT_NE(r.out.find("imagenet"), std::string::npos) << r.out;
  r = run("generate --family nmt --count 4 --test 4 --out " + temp_dir("bad2"));
  EXPECT_EQ(r.rc, 2) << r.out;
  EXPECT_NE(r.out.find("test split"), std::string::npos) << r.out;
}

TEST(CoarsenCli, CoarsensAndMapsAPlacementBack) {
  const std::string dir = temp_dir("coarse");
  ASSERT_EQ(run("generate --family cifar10 --count 1 --test 0 --layers 1 --seed 2 --out " + dir).rc,
            0);
  const std::string g = dir + "/cifar10_0.json";
  ProcessResult r = run("coarsen --graph " + g + " --groups 20 --out " + dir + "/c.json --map " +
                        dir + "/m.json");
  ASSERT_EQ(r.rc, 0) << r.out;
  Graph fine = load_graph(g);
  Graph coarse = load_graph(dir + "/c.json");
  EXPECT_LE(coarse.num_nodes(), 20);
  // Every group on device (index mod 2); map back and check every op.
  Placement p(2, coarse.num_nodes());
  for (int v = 0; v < coarse.num_nodes(); ++v) p.device[v] = v % 2;
  save_placement(coarse, p, dir + "/cp.json");
  r = run("coarsen --graph " + g + " --map " + dir + "/m.json --placement " + dir +
          "/cp.json --fine-out " + dir + "/fp.json");
  ASSERT_EQ(r.rc, 0) << r.out;
  Placement fp = load_placement(dir + "/fp.json", fine);
  CoarseGraph map = load_coarse_map(dir + "/m.json", fine);
  for (int v = 0; v < fine.num_nodes(); ++v) EXPECT_EQ(fp.device[v], map.group[v] % 2);
}

// `placeto place --ungroup`: a coarse placement mapped back to every op of the original.
class PlaceUngroupCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = temp_dir("ungroup");
    ASSERT_EQ(
        run("generate --family cifar10 --count 2 --test 0 --layers 1 --seed 4 --out " + dir_).rc,
        0);
    ProcessResult r = run("coarsen --graph " + dir_ + "/cifar10_0.json --groups 16 --out " + dir_ +
                          "/c.json --map " + dir_ + "/c.map.json");
    ASSERT_EQ(r.rc, 0) << r.out;
  }
  // Runs place on the coarse graph with `extra` flags.
  static ProcessResult place(const std::string& extra) {
    return run("place --graph " + dir_ + "/c.json --devices 3 --method round-robin --out " + dir_ +
               "/p.json " + extra);
  }
  // A copy of the map edited by `edit`, written to `name`.
  static std::string edited_map(const std::string& name, const std::function<void(Json&)>& edit) {
    Json doc = parse_json_file(dir_ + "/c.map.json");
    edit(doc);
    write_file_atomic(dir_ + "/" + name, doc.dump());
    return dir_ + "/" + name;
  }
  static void expect_refused(const ProcessResult& r, const std::vector<std::string>& parts) {
    EXPECT_EQ(r.rc, 2) << r.out;
    for (const auto& p : parts) EXPECT_NE(r.out.find(p), std::string::npos) << p << " in " << r.out;
  }
  static std::string dir_;
};
std::string PlaceUngroupCli::dir_;

TEST_F(PlaceUngroupCli, PlacesEveryOpOfTheOriginalAndSimulatesIt) {
  // The map is found beside the coarse graph (c.map.json), the fine placement beside --out.
  ProcessResult r = place("--ungroup " + dir_ + "/cifar10_0.json");
  ASSERT_EQ(r.rc, 0) << r.out;
  const Json out = Json::parse(r.out.substr(r.out.find('{')));
  const Graph fine = load_graph(dir_ + "/cifar10_0.json");
  const Graph coarse = load_graph(dir_ + "/c.json");
  ASSERT_EQ(out["fine"]["out"], dir_ + "/p.fine.json");
  EXPECT_EQ(out["fine"]["ops"], fine.num_nodes());
  const Placement cp = load_placement(dir_ + "/p.json", coarse);
  const Placement fp = load_placement(dir_ + "/p.fine.json", fine);
  const CoarseGraph map = load_coarse_map(dir_ + "/c.map.json", fine);
  for (NodeId v = 0; v < fine.num_nodes(); ++v) EXPECT_EQ(fp.device[v], cp.device[map.group[v]]);
  const Cluster cluster = default_cluster(3);  // the Simulator keeps a reference to it
  Simulator sim(fine, cluster);
  EXPECT_DOUBLE_EQ(out["fine"]["runtime_us"].get<double>(), sim.simulate(fp).runtime_us);
  // A family graph has no ONNX origins: no per-ONNX-node section.
  EXPECT_FALSE(parse_json_file(dir_ + "/p.fine.json").contains("onnx_nodes"));
}

TEST_F(PlaceUngroupCli, RefusesAMapMissingAnOp) {
  std::string op;
  const std::string map = edited_map("missing.json", [&](Json& d) {
    op = d["map"].begin().key();
    d["map"].erase(op);
  });
  expect_refused(place("--ungroup " + dir_ + "/cifar10_0.json --map " + map),
                 {map, "map", op, "has no group"});
}

TEST_F(PlaceUngroupCli, RefusesAGroupOutOfRange) {
  std::string op;
  const std::string map = edited_map("range.json", [&](Json& d) {
    op = d["map"].begin().key();
    d["map"][op] = 99;
  });
  expect_refused(place("--ungroup " + dir_ + "/cifar10_0.json --map " + map),
                 {map, "map." + op, "group 99 is out of range"});
}

TEST_F(PlaceUngroupCli, RefusesTheWrongOriginalGraph) {
  expect_refused(place("--ungroup " + dir_ + "/cifar10_1.json"),
                 {dir_ + "/c.map.json", "graph", "cifar10_0", "cifar10_1"});
}

TEST_F(PlaceUngroupCli, RefusesAMapOfAnotherCoarsening) {
  ASSERT_EQ(run("coarsen --graph " + dir_ + "/cifar10_0.json --groups 8 --out " + dir_ +
                "/c8.json --map " + dir_ + "/c8.map.json")
                .rc,
            0);
  expect_refused(
      place("--ungroup " + dir_ + "/cifar10_0.json --map " + dir_ + "/c8.map.json"),
      {dir_ + "/c8.map.json", "coarse_graph", "cifar10_0_coarse8", "cifar10_0_coarse16"});
}

TEST_F(PlaceUngroupCli, RefusesMapWithoutUngroup) {
  expect_refused(place("--map " + dir_ + "/c.map.json"), {"--ungroup"});
}

}  // namespace
}  // namespace placeto
