// `placeto generate` and `placeto coarsen` as a user runs them: real processes, real files.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>

#include "common/files.h"
#include "sim/coarsen.h"
#include "sim/families/family.h"
#include "sim/graph_io.h"

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

std::string temp_dir(const std::string& name) {
  auto p = std::filesystem::temp_directory_path() / ("placeto_cli_" + name);
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

}  // namespace
}  // namespace placeto
