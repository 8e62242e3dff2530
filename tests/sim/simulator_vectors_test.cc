// The compatible mode against the 30 reference vectors (tests/data/sim_vectors, copied from
// shared/reference/sim_vectors): runtime and per-device peak memory to 1e-9 relative.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "common/json_util.h"
#include "sim/graph_io.h"
#include "sim/simulator.h"

namespace placeto {
namespace {

std::vector<std::string> vector_files() {
  std::vector<std::string> files;
  for (auto& entry : std::filesystem::directory_iterator(PLACETO_TEST_DATA "/sim_vectors"))
    if (entry.path().extension() == ".json") files.push_back(entry.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

bool close_rel(double a, double b, double rel = 1e-9) {
  return std::fabs(a - b) <= rel * std::max(1.0, std::max(std::fabs(a), std::fabs(b)));
}

TEST(SimVectors, AllThirtyCasesMatch) {
  auto files = vector_files();
  ASSERT_EQ(files.size(), 30u);
  for (const auto& file : files) {
    Json doc = parse_json_file(file);
    Graph g = graph_from_json(doc["graph"], file);
    Json pdoc = {{"devices", doc["devices"]}, {"placement", doc["placement"]}};
    Placement p = placement_from_json(pdoc, g, file);
    Cluster c = default_cluster(p.num_devices);
    Simulator sim(g, c);
    const SimResult& r = sim.simulate(p);
    double want = doc["expected"]["runtime_us"].get<double>();
    EXPECT_TRUE(close_rel(r.runtime_us, want))
        << file << ": runtime " << r.runtime_us << " want " << want;
    auto want_mem = doc["expected"]["peak_mem_bytes"].get<std::vector<double>>();
    ASSERT_EQ(want_mem.size(), r.peak_mem_bytes.size()) << file;
    for (size_t d = 0; d < want_mem.size(); ++d)
      EXPECT_TRUE(close_rel(static_cast<double>(r.peak_mem_bytes[d]), want_mem[d]))
          << file << ": peak memory of device " << d << " " << r.peak_mem_bytes[d] << " want "
          << want_mem[d];
    // A second run on the same simulator gives the same numbers (buffers are reset).
    double again = sim.simulate(p).runtime_us;
    EXPECT_EQ(again, r.runtime_us) << file;
  }
}

}  // namespace
}  // namespace placeto
