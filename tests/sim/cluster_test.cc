// Cluster files: the heterogeneous mode's keys, derived links, errors that name the file and
// the key, the round trip through cluster_to_yaml, and the files in experiments/clusters.
#include "sim/cluster.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "common/error.h"
#include "common/files.h"
#include "sim/cost_model.h"

namespace placeto {
namespace {

std::string temp_file(const std::string& name, const std::string& text) {
  const std::string path = (std::filesystem::temp_directory_path() / name).string();
  write_file_atomic(path, text);
  return path;
}

std::string load_error(const std::string& name, const std::string& text) {
  const std::string path = temp_file(name, text);
  try {
    load_cluster(path);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(ClusterYaml, HeterogeneousLinksComeFromProfilesAndNodes) {
  Cluster c = load_cluster(temp_file("c_het.yaml",
                                     "mode: heterogeneous\nprofile: a100\ndevices_per_node: 2\n"
                                     "devices: 4\ncontention: per-link\n"));
  ASSERT_EQ(c.num_devices(), 4);
  EXPECT_EQ(c.hetero.contention, Contention::kPerLink);
  EXPECT_EQ(c.devices[3].node, 1);
  const DeviceProfile& a100 = device_profile("a100");
  EXPECT_DOUBLE_EQ(c.devices[0].memory_bytes, a100.memory_bytes);
  EXPECT_DOUBLE_EQ(c.link(0, 1).bytes_per_us, a100.intra_node_bandwidth * 1e-6);
  EXPECT_DOUBLE_EQ(c.link(1, 2).bytes_per_us, a100.inter_node_bandwidth * 1e-6);
  EXPECT_DOUBLE_EQ(c.link(1, 2).latency_us, a100.inter_node_latency_us);
  // The cost view placers use follows the links.
  EXPECT_DOUBLE_EQ(c.transfer_time_us(1000000, 0, 2),
                   a100.inter_node_latency_us + 1e6 / (a100.inter_node_bandwidth * 1e-6));
  EXPECT_EQ(c.transfer_time_us(1000000, 2, 2), 0.0);
}

TEST(ClusterYaml, OverridesSpeedsAndMixedProfiles) {
  Cluster c = load_cluster(temp_file(
      "c_mixed.yaml",
      "mode: heterogeneous\ndevices:\n  - {name: a, profile: v100, speed: 2.5}\n"
      "  - {name: b, profile: k80}\n  - {name: c, profile: v100}\n"
      "links:\n  - {src: a, dst: 2, gbytes_per_s: 12.5, latency_us: 3, both_directions: false}\n"));
  EXPECT_DOUBLE_EQ(c.op_time_us(100, 0), 40.0);
  EXPECT_DOUBLE_EQ(c.op_time_us(100, 1), 100.0);
  // A v100-k80 pair takes the slower (k80) link.
  EXPECT_DOUBLE_EQ(c.link(0, 1).bytes_per_us, device_profile("k80").intra_node_bandwidth * 1e-6);
  EXPECT_DOUBLE_EQ(c.link(0, 2).bytes_per_us, 12500.0);
  EXPECT_DOUBLE_EQ(c.link(0, 2).latency_us, 3.0);
  EXPECT_DOUBLE_EQ(c.link(2, 0).bytes_per_us, device_profile("v100").intra_node_bandwidth * 1e-6);
}

TEST(ClusterYaml, RoundTripsThroughYaml) {
  Cluster c = profile_cluster("h100", 2, 2, Contention::kPerLink);
  c.devices[1].speed = 1.5;
  c.link_overrides.push_back({0, 3, {1000.0, 7.0}, true});
  c.derive_links();
  const std::string path = temp_file("c_round.yaml", cluster_to_yaml(c));
  Cluster back = load_cluster(path);
  EXPECT_EQ(cluster_to_yaml(back), cluster_to_yaml(c));
  EXPECT_EQ(back.devices[1].speed, 1.5);
  EXPECT_EQ(back.devices[3].node, 1);
  EXPECT_DOUBLE_EQ(back.link(3, 0).latency_us, 7.0);
  // The compatible default round-trips too.
  Cluster d = default_cluster(3);
  EXPECT_EQ(cluster_to_yaml(load_cluster(temp_file("c_round2.yaml", cluster_to_yaml(d)))),
            cluster_to_yaml(d));
}

TEST(ClusterYaml, ErrorsNameTheFileAndTheKey) {
  std::string e = load_error("c_bad1.yaml", "mode: heterogeneous\ndevices: 2\ncontension: bus\n");
  EXPECT_NE(e.find("c_bad1.yaml"), std::string::npos) << e;
  EXPECT_NE(e.find("contension"), std::string::npos) << e;
  EXPECT_NE(e.find("did you mean 'contention'"), std::string::npos) << e;

  e = load_error("c_bad2.yaml", "mode: heterogeneous\ndevices: 2\ncontention: shared\n");
  EXPECT_NE(e.find("c_bad2.yaml: contention"), std::string::npos) << e;
  EXPECT_NE(e.find("per-link"), std::string::npos) << e;

  e = load_error("c_bad3.yaml", "mode: heterogeneous\ndevices:\n  - {profile: p100}\n");
  EXPECT_NE(e.find("devices[0].profile"), std::string::npos) << e;
  EXPECT_NE(e.find("p100"), std::string::npos) << e;

  e = load_error("c_bad4.yaml", "mode: heterogeneous\ndevices:\n  - {speed: 0}\n");
  EXPECT_NE(e.find("devices[0].speed"), std::string::npos) << e;

  e = load_error("c_bad5.yaml", "devices: 2\ncontention: per-link\n");
  EXPECT_NE(e.find("heterogeneous"), std::string::npos) << e;

  e = load_error(
      "c_bad6.yaml",
      "mode: heterogeneous\ndevices: 2\nlinks:\n  - {src: 0, dst: 5, gbytes_per_s: 1}\n");
  EXPECT_NE(e.find("links[0].dst"), std::string::npos) << e;

  e = load_error("c_bad7.yaml", "mode: heterogeneous\ndevices:\n  - {nmae: x}\n");
  EXPECT_NE(e.find("devices[0].nmae"), std::string::npos) << e;
  EXPECT_NE(e.find("did you mean 'name'"), std::string::npos) << e;
}

TEST(ClusterFiles, ExperimentClustersLoad) {
  int count = 0;
  for (auto& entry :
       std::filesystem::directory_iterator(PLACETO_SOURCE_DIR "/experiments/clusters")) {
    if (entry.path().extension() != ".yaml") continue;
    SCOPED_TRACE(entry.path().string());
    Cluster c = load_cluster(entry.path().string());
    EXPECT_GE(c.num_devices(), 2);
    EXPECT_EQ(c.links.size(), static_cast<size_t>(c.num_devices() * c.num_devices()));
    ++count;
  }
  EXPECT_GE(count, 4);
  Cluster net = load_cluster(PLACETO_SOURCE_DIR "/experiments/clusters/a100_2x4_net.yaml");
  EXPECT_GT(net.link(0, 1).bytes_per_us, net.link(0, 4).bytes_per_us);
  Cluster k80 = load_cluster(PLACETO_SOURCE_DIR "/experiments/clusters/k80x4.yaml");
  EXPECT_EQ(cluster_to_yaml(k80), cluster_to_yaml([] {
              Cluster d = default_cluster(4);
              d.name = "k80x4";
              return d;
            }()));
}

}  // namespace
}  // namespace placeto
