// Placeto policy checkpoints written before policy.memory_features existed (the shipped
// models/placeto_rl_ptb.h5 and placeto_rl_nmt.h5 of commit 84c3d63, kept in
// tests/data/old_runs/placeto_rl_84c3d63/) still load with the network width they were
// trained with and place exactly as that commit's `placeto place --method policy` did.
#include <gtest/gtest.h>

#include <string>

#include "common/error.h"
#include "learner/policy_io.h"
#include "sim/cluster.h"
#include "sim/graph_io.h"

namespace placeto {
namespace {

const std::string kDir =
    std::string(PLACETO_SOURCE_DIR) + "/tests/data/old_runs/placeto_rl_84c3d63/";

std::string devices_of(const Placement& p) {
  std::string s;
  for (int32_t d : p.device) s += static_cast<char>('0' + d);
  return s;
}

// One golden placement: a shipped model on a small graph at 3 devices, greedy (seed 1) and the
// best of 4 samples (seed 3).
struct GoldenCase {
  const char* model;
  const char* graph;
  double greedy_us;
  const char* greedy_devices;
  double sampled_us;
};

// Golden values from commit 84c3d63's binary:
//   placeto place --graph G --devices 3 --method policy --checkpoint M --out p.json
// (greedy, seed 1) and the same with --samples 4 --seed 3.  The graphs are
//   placeto generate --family ptb --count 1 --test 0 --seed 5 --steps 3 --cell-nodes 4
//   placeto generate --family nmt --count 1 --test 0 --seed 5 --steps 2
TEST(ShippedPolicy, CheckpointsWithoutMemoryFeaturesPlaceAsBefore) {
  const GoldenCase cases[] = {
      {"placeto_rl_ptb.h5", "ptb_small.json", 9227.320513893432,
       "22000000010000000000100000000001000000000011102200020222100000111110000001111122111111110"
       "000000000",
       9137.656587119975},
      {"placeto_rl_ptb.h5", "nmt_small.json", 11176.372009763545,
       "01000000000000111111120000000000000000000000000000101111111121111111122201111111101112122"
       "11111000012000001200022000002211111112222000000120000000020122222112211110011",
       10957.772611790351},
      {"placeto_rl_nmt.h5", "ptb_small.json", 9227.320513893432,
       "22000000010000000000100000000001000000000011102200020222100000111110000001111122111111110"
       "000000000",
       9227.320513893432},
      {"placeto_rl_nmt.h5", "nmt_small.json", 11176.372009763545,
       "01000000000000111111120000000000000000000000000000101111111121111111122201111111101112122"
       "11111000012000001200022000002211111112222000000120000000020122222112211110011",
       11176.372009763545},
  };
  const Cluster cluster = default_cluster(3);
  for (const auto& c : cases) {
    LoadedPolicy policy = load_policy(kDir + c.model);
    EXPECT_FALSE(policy.config.policy.memory_features) << c.model;
    EXPECT_TRUE(policy.config.memory_factors.empty()) << c.model;
    EXPECT_EQ(policy.net->feature_width(), 5 + 3 + 5 * 3) << c.model;
    const Graph g = load_graph(kDir + c.graph);
    const PolicyPlacement greedy = place_with_policy(policy, g, cluster, 1, 1);
    EXPECT_EQ(greedy.runtime_us, c.greedy_us) << c.model << " on " << c.graph;
    EXPECT_EQ(devices_of(greedy.placement), c.greedy_devices) << c.model << " on " << c.graph;
    EXPECT_EQ(place_with_policy(policy, g, cluster, 4, 3).runtime_us, c.sampled_us)
        << c.model << " on " << c.graph;
  }
}

// The shipped policies of commit dd02d70 (tests/data/old_runs/placeto_rl_dd02d70/: 3 devices,
// policy.memory_features, trained before policy.any_devices and the hierarchical keys
// existed): they load with the defaults of the new keys, place their own device count as they
// did (these graphs are far below policy.coarse_above, so placement is not hierarchical), and
// refuse other counts, naming both.  Golden values from `placeto place --method policy` at the
// commit that added policy.any_devices; the network's forward for checkpoints without it is
// the code the 84c3d63 test above pins bit for bit.
TEST(ShippedPolicy, PerCountCheckpointsPlaceTheirOwnCountAndRefuseOthers) {
  const std::string dir =
      std::string(PLACETO_SOURCE_DIR) + "/tests/data/old_runs/placeto_rl_dd02d70/";
  const GoldenCase cases[] = {
      {"placeto_rl_ptb.h5", "ptb_small.json", 9227.320513893432,
       "12000000010000000000100000000001000000000011102200020222100000111110000001111122111111110"
       "000000000",
       9137.656587119975},
      {"placeto_rl_nmt.h5", "nmt_small.json", 11303.58145995424,
       "10111111000000011111020000000000000000000000000000000001010020001010020101111111101111121"
       "11111000000000001222000001001111111111010000000100000000000121121111211110012",
       11303.58145995424},
  };
  for (const auto& c : cases) {
    LoadedPolicy policy = load_policy(dir + c.model);
    EXPECT_TRUE(policy.config.policy.memory_features) << c.model;
    EXPECT_FALSE(policy.config.policy.any_devices) << c.model;
    EXPECT_TRUE(policy.config.cluster_mix.empty()) << c.model;
    EXPECT_EQ(policy.config.policy.coarse_above, 512) << c.model;
    const Graph g = load_graph(kDir + c.graph);
    const PolicyPlacement greedy = place_with_policy(policy, g, default_cluster(3), 1, 1);
    EXPECT_EQ(greedy.runtime_us, c.greedy_us) << c.model;
    EXPECT_EQ(devices_of(greedy.placement), c.greedy_devices) << c.model;
    EXPECT_EQ(place_with_policy(policy, g, default_cluster(3), 4, 3).runtime_us, c.sampled_us)
        << c.model;
    try {
      place_with_policy(policy, g, default_cluster(4), 1, 1);
      ADD_FAILURE() << c.model << " placed 4 devices";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("trained for 3 devices, but the cluster has 4"),
                std::string::npos)
          << e.what();
    }
  }
}

}  // namespace
}  // namespace placeto
