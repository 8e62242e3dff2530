// Placeto policy checkpoints written before policy.memory_features existed (the shipped
// models/placeto_rl_ptb.h5 and placeto_rl_nmt.h5 of commit 84c3d63, kept in
// tests/data/old_runs/placeto_rl_84c3d63/) still load with the network width they were
// trained with and place exactly as that commit's `placeto place --method policy` did.
#include <gtest/gtest.h>

#include <string>

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

// Golden values from commit 84c3d63's binary:
//   placeto place --graph G --devices 3 --method policy --checkpoint M --out p.json
// (greedy, seed 1) and the same with --samples 4 --seed 3.  The graphs are
//   placeto generate --family ptb --count 1 --test 0 --seed 5 --steps 3 --cell-nodes 4
//   placeto generate --family nmt --count 1 --test 0 --seed 5 --steps 2
TEST(ShippedPolicy, CheckpointsWithoutMemoryFeaturesPlaceAsBefore) {
  const struct {
    const char* model;
    const char* graph;
    double greedy_us;
    const char* greedy_devices;
    double sampled_us;
  } cases[] = {
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

}  // namespace
}  // namespace placeto
