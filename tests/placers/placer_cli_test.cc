// `placeto place` and `placeto compare` run as real processes over real files: a directory of
// generated random DAGs, a CSV report read back and checked against its own definitions.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <cmath>
#include <map>
#include <sstream>

#include "common/files.h"
#include "common/json_util.h"
#include "sim/graph_io.h"
#include "sim/simulator.h"
#include "tests/placers/random_dag.h"

namespace placeto {
namespace {

struct Result {
  int rc;
  std::string out, err;
};

class PlacerCli : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/placer_cli_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    make_directories(dir_ + "/graphs");
  }
  void TearDown() override { std::system(("rm -rf " + dir_).c_str()); }

  Result run(const std::string& args) {
    const std::string cmd = std::string(PLACETO_BIN_DIR) + "/placeto " + args + " >" + dir_ +
                            "/stdout 2>" + dir_ + "/stderr";
    const int status = std::system(cmd.c_str());
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, read_file(dir_ + "/stdout"),
            read_file(dir_ + "/stderr")};
  }

  // Five ordinary DAGs and one whose tensors are so large that moving any of them costs more
  // than it saves, so spreading placers lose to single there.
  void write_family() {
    for (int k = 0; k < 5; ++k) {
      testing::RandomDagOptions o;
      o.num_ops = 30 + 20 * k;
      o.width = 3 + k;
      save_graph(testing::random_layered_dag(o, 100 + k, "dag" + std::to_string(k)),
                 dir_ + "/graphs/dag" + std::to_string(k) + ".json");
    }
    testing::RandomDagOptions heavy;
    heavy.num_ops = 40;
    heavy.width = 2;
    heavy.min_out_bytes = 1e8;
    heavy.max_out_bytes = 1e9;
    save_graph(testing::random_layered_dag(heavy, 7, "heavy_tensors"),
               dir_ + "/graphs/heavy_tensors.json");
  }

  std::string dir_;
};

std::vector<std::vector<std::string>> parse_csv(const std::string& text) {
  std::vector<std::vector<std::string>> rows;
  std::stringstream ss(text);
  for (std::string line; std::getline(ss, line);) {
    std::vector<std::string> fields;
    std::stringstream ls(line);
    for (std::string f; std::getline(ls, f, ',');) fields.push_back(f);
    if (!line.empty() && line.back() == ',') fields.push_back("");
    rows.push_back(fields);
  }
  return rows;
}

TEST_F(PlacerCli, CompareReportsEveryGraphAndMethodAndFlagsLossesToSingle) {
  write_family();
  const Result r =
      run("compare --graphs " + dir_ +
          "/graphs --devices 3 --methods "
          "single,random,round-robin,expert,metis,heft,m-etf,m-sct,anneal --budget 150 "
          "--out " +
          dir_ + "/report.csv");
  ASSERT_EQ(r.rc, 0) << r.err;
  const auto rows = parse_csv(read_file(dir_ + "/report.csv"));
  ASSERT_FALSE(rows.empty());
  const std::vector<std::string> header = {"graph",
                                           "method",
                                           "devices",
                                           "runtime_us",
                                           "peak_mem_bytes_max",
                                           "feasible",
                                           "place_ms",
                                           "lower_bound_us",
                                           "ratio_to_lb",
                                           "ratio_to_best_classical",
                                           "ratio_to_single",
                                           "loses_to_single",
                                           "note"};
  EXPECT_EQ(rows[0], header);
  ASSERT_EQ(rows.size(), 1u + 6 * 10);  // 6 graphs x (9 methods + best-classical)

  std::map<std::string, std::map<std::string, std::vector<std::string>>> by;
  for (size_t i = 1; i < rows.size(); ++i) {
    ASSERT_EQ(rows[i].size(), header.size()) << i;
    by[rows[i][0]][rows[i][1]] = rows[i];
  }
  ASSERT_EQ(by.size(), 6u);
  int losses = 0;
  for (const auto& [graph, methods] : by) {
    ASSERT_EQ(methods.size(), 10u) << graph;
    const double single = std::stod(methods.at("single")[3]);
    double best_fast = 1e300;
    for (const auto& [method, f] : methods) {
      const double runtime = std::stod(f[3]);
      EXPECT_EQ(f[2], "3");
      EXPECT_EQ(f[5], "true") << graph << " " << method;
      EXPECT_GE(std::stod(f[8]), 1.0) << graph << " " << method;  // never beats the bound
      EXPECT_NEAR(std::stod(f[10]), runtime / single, 1e-6 * runtime / single);
      EXPECT_EQ(f[11], runtime > single * (1 + 1e-12) ? "true" : "false") << graph << method;
      losses += f[11] == "true";
      if (method != "anneal" && method != "best-classical")
        best_fast = std::min(best_fast, runtime);
    }
    EXPECT_DOUBLE_EQ(std::stod(methods.at("best-classical")[3]), best_fast) << graph;
    for (const auto& [method, f] : methods)
      EXPECT_NEAR(std::stod(f[9]), std::stod(f[3]) / best_fast, 1e-6) << graph << method;
    EXPECT_LE(std::stod(methods.at("anneal")[3]), best_fast * (1 + 1e-9)) << graph;
  }
  // Round-robin cuts every edge of heavy_tensors: 130 ms transfers against 1 ms of compute.
  EXPECT_EQ(by["heavy_tensors"]["round-robin"][11], "true");
  EXPECT_GT(losses, 0);
  EXPECT_NE(r.out.find("Losses to single"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("heavy_tensors: round-robin is"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("best-classical"), std::string::npos) << r.out;
}

TEST_F(PlacerCli, PlaceWritesAPlacementWhoseSimulationMatchesTheReport) {
  write_family();
  const std::string graph = dir_ + "/graphs/dag2.json";
  const Result r =
      run("place --graph " + graph + " --devices 4 --method heft --out " + dir_ + "/p.json");
  ASSERT_EQ(r.rc, 0) << r.err;
  const Json report = parse_json_text(r.out, "stdout");
  const Graph g = load_graph(graph);
  const Placement p = load_placement(dir_ + "/p.json", g);
  EXPECT_EQ(p.num_devices, 4);
  const Cluster c = default_cluster(4);
  Simulator sim(g, c);
  EXPECT_DOUBLE_EQ(sim.simulate(p).runtime_us, report["runtime_us"].get<double>());
  EXPECT_TRUE(report["feasible"].get<bool>());

  // anneal polishes the written placement and never returns anything slower.
  const Result a = run("place --graph " + graph + " --devices 4 --method anneal --budget 200 " +
                       "--initial " + dir_ + "/p.json --out " + dir_ + "/a.json");
  ASSERT_EQ(a.rc, 0) << a.err;
  EXPECT_LE(parse_json_text(a.out, "stdout")["runtime_us"].get<double>(),
            report["runtime_us"].get<double>());
}

TEST_F(PlacerCli, InfeasibleCapacityIsReportedNotHidden) {
  write_family();
  write_file_atomic(dir_ + "/tiny.yaml", "devices: 2\nmemory_bytes: 1000\n");
  const Result r = run("place --graph " + dir_ + "/graphs/dag0.json --cluster " + dir_ +
                       "/tiny.yaml --method m-etf --out " + dir_ + "/p.json");
  // Written, reported, and exit 1: the placement does not fit.
  ASSERT_EQ(r.rc, 1) << r.err;
  EXPECT_FALSE(parse_json_text(r.out, "stdout")["feasible"].get<bool>());
  EXPECT_NE(r.err.find("no feasible placement found by m-etf"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("infeasible"), std::string::npos) << r.err;
  for (const char* device : {"gpu0: need ", "gpu1: need "})
    EXPECT_NE(r.err.find(device), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("of capacity 1000 bytes"), std::string::npos) << r.err;
  EXPECT_TRUE(file_exists(dir_ + "/p.json"));

  const Result cmp = run("compare --graphs " + dir_ + "/graphs --cluster " + dir_ +
                         "/tiny.yaml --methods single,heft --out " + dir_ + "/r.csv");
  ASSERT_EQ(cmp.rc, 0) << cmp.err;
  const auto rows = parse_csv(read_file(dir_ + "/r.csv"));
  for (size_t i = 1; i < rows.size(); ++i) EXPECT_EQ(rows[i][5], "false") << i;
  // The summary counts every infeasible row: all six graphs, for each method.
  std::istringstream table(cmp.out);
  std::string line;
  int methods = 0;
  while (std::getline(table, line)) {
    std::istringstream words(line);
    std::vector<std::string> w;
    for (std::string x; words >> x;) w.push_back(x);
    if (w.size() != 8 || (w[0] != "single" && w[0] != "heft")) continue;
    EXPECT_EQ(w[6], "6") << line;
    ++methods;
  }
  EXPECT_EQ(methods, 2) << cmp.out;
}

// A generated training graph on 4 devices of half the balanced share (its need on one device
// / 4): nothing fits, and best and auto write the least-overflowing placement and exit 1.
TEST_F(PlacerCli, WhereNothingFitsBestAndAutoExitOneWithTheLeastOverflow) {
  const Result gen = run("generate --family ptb --count 1 --seed 3 --steps 4 --layers 1 --out " +
                         dir_ + "/family");
  ASSERT_EQ(gen.rc, 0) << gen.err;
  const std::string graph = dir_ + "/family/ptb_0.json";
  const Result one =
      run("place --graph " + graph + " --devices 1 --method single --out " + dir_ + "/one.json");
  ASSERT_EQ(one.rc, 0) << one.err;
  const Json single = parse_json_text(one.out, "stdout");
  const double share =
      (single["peak_mem_bytes"][0].get<double>() + single["param_bytes"][0].get<double>()) / 4;
  write_file_atomic(dir_ + "/half.yaml",
                    "devices: 4\nmemory_bytes: " + std::to_string(int64_t(0.5 * share)) + "\n");
  for (const std::string method : {"best", "auto"}) {
    const Result r = run("place --graph " + graph + " --cluster " + dir_ + "/half.yaml --method " +
                         method + " --budget 100 --out " + dir_ + "/" + method + ".json");
    EXPECT_EQ(r.rc, 1) << method << ": " << r.err;
    EXPECT_NE(r.err.find("infeasible"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("gpu3: need "), std::string::npos) << r.err;
    EXPECT_FALSE(parse_json_text(r.out, "stdout")["feasible"].get<bool>());
    EXPECT_TRUE(file_exists(dir_ + "/" + method + ".json"));
  }
}

TEST_F(PlacerCli, BadInputsFailWithAClearMessage) {
  write_family();
  const std::string g = " --graph " + dir_ + "/graphs/dag0.json --out " + dir_ + "/p.json";
  Result r = run("place --devices 2 --method hfet" + g);
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("did you mean 'heft'"), std::string::npos) << r.err;
  r = run("place --method heft" + g);
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("--devices"), std::string::npos) << r.err;
  r = run("compare --graphs " + dir_ + "/nothing --devices 2 --out " + dir_ + "/r.csv");
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("not a directory"), std::string::npos) << r.err;
  r = run("compare --graphs " + dir_ + "/graphs --devices 2 --methods heft,heft --out " + dir_ +
          "/r.csv");
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("listed twice"), std::string::npos) << r.err;
  EXPECT_FALSE(file_exists(dir_ + "/r.csv"));
  // The Placeto policy in compare needs --checkpoint (the learned search has a default
  // model, but not "none"), and --checkpoint needs a learned method.
  r = run("compare --graphs " + dir_ + "/graphs --devices 2 --methods heft,policy --out " + dir_ +
          "/r.csv");
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("'policy' needs a checkpoint (--checkpoint)"), std::string::npos) << r.err;
  r = run("compare --graphs " + dir_ +
          "/graphs --devices 2 --methods heft,policy-search "
          "--checkpoint none --out " +
          dir_ + "/r.csv");
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("policy-search needs a model"), std::string::npos) << r.err;
  EXPECT_FALSE(file_exists(dir_ + "/r.csv"));
  r = run("compare --graphs " + dir_ + "/graphs --devices 2 --methods heft --checkpoint " +
          std::string(PLACETO_SOURCE_DIR) + "/models/ptb.h5 --out " + dir_ + "/r.csv");
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("none of --methods 'heft' is a learned method"), std::string::npos) << r.err;
  EXPECT_FALSE(file_exists(dir_ + "/r.csv"));
}

// The shipped models through the CLI: compare runs the learned search beside the classical
// searches, and auto is never worse than the best fast placer on any graph.
TEST_F(PlacerCli, CompareRunsTheShippedLearnedSearch) {
  write_family();
  const std::string model = std::string(PLACETO_SOURCE_DIR) + "/models/ptb.h5";
  const Result r = run("compare --graphs " + dir_ +
                       "/graphs --devices 3 --methods descent,policy-search,scorer-greedy,auto "
                       "--checkpoint " +
                       model + " --budget 300 --out " + dir_ + "/r.csv");
  ASSERT_EQ(r.rc, 0) << r.err;
  std::istringstream csv(read_file(dir_ + "/r.csv"));
  std::string line;
  std::getline(csv,
               line);  // header: graph,method,devices,runtime_us,...,ratio_to_best_classical,...
  std::map<std::string, int> rows;
  while (std::getline(csv, line)) {
    std::vector<std::string> f;
    std::stringstream ls(line);
    for (std::string x; std::getline(ls, x, ',');) f.push_back(x);
    ASSERT_GE(f.size(), 10u) << line;
    ++rows[f[1]];
    if (f[1] == "auto" || f[1] == "policy-search" || f[1] == "scorer-greedy") {
      EXPECT_LE(std::stod(f[9]), 1.0 + 1e-12) << line;  // never worse than best classical
    }
  }
  EXPECT_EQ(rows["policy-search"], 6);
  EXPECT_EQ(rows["scorer-greedy"], 6);
  EXPECT_EQ(rows["auto"], 6);
}

}  // namespace
}  // namespace placeto
