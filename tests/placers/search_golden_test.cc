// Golden placements of the searching placers: anneal, slack-anneal, chain-anneal and descent,
// run through the registry with fixed seeds and budgets on generated graphs, must give exactly
// the placements they gave when the constants were recorded (an FNV-1a 64-bit hash of the
// device vector).  Recorded on the code before the Metropolis engine (sim/placers/metropolis.h)
// was introduced, so that moving the searches onto the engine is shown to change nothing;
// chain-anneal's when it was added (anneal's stayed as they were).  A deliberate change of an
// algorithm changes these constants; the failure message prints the new hash.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "sim/cluster.h"
#include "sim/families/family.h"
#include "sim/placers/registry.h"

namespace placeto {
namespace {

uint64_t fnv1a(const Placement& p) {
  uint64_t h = 1469598103934665603ULL;
  auto add = [&h](uint32_t x) {
    for (int b = 0; b < 4; ++b) {
      h ^= (x >> (8 * b)) & 0xffu;
      h *= 1099511628211ULL;
    }
  };
  add(static_cast<uint32_t>(p.num_devices));
  for (int32_t d : p.device) add(static_cast<uint32_t>(d));
  return h;
}

enum class Variant { kPlain, kGroups, kGroupsOnly, kInitial, kTimeLimit };

struct GoldenCase {
  const char* name;
  const char* method;
  const char* family;
  int index;  // graph index, generator seed 6262
  int devices;
  int64_t budget;
  int64_t seed;
  Variant variant;
  uint64_t hash;
};

const GoldenCase kCases[] = {
    {"anneal_ptb0_d2", "anneal", "ptb", 0, 2, 400, 1, Variant::kPlain, 0xc7f67cf1e9203631ULL},
    {"anneal_ptb1_d3", "anneal", "ptb", 1, 3, 300, 7, Variant::kPlain, 0xd367fe85d6de78c2ULL},
    {"anneal_nmt0_d4", "anneal", "nmt", 0, 4, 300, 3, Variant::kPlain, 0x2c5cca0920f4f486ULL},
    {"anneal_cifar0_d3", "anneal", "cifar10", 0, 3, 300, 2, Variant::kPlain, 0x3daa02b9b3d88663ULL},
    {"anneal_groups_ptb0_d3", "anneal", "ptb", 0, 3, 400, 5, Variant::kGroups,
     0x45930f2e1e34d280ULL},
    {"anneal_groups_only_nmt0_d2", "anneal", "nmt", 0, 2, 300, 4, Variant::kGroupsOnly,
     0xc9b984383b915730ULL},
    {"anneal_initial_cifar0_d4", "anneal", "cifar10", 0, 4, 300, 6, Variant::kInitial,
     0x147588ee54119ce7ULL},
    {"anneal_time_limit_ptb1_d2", "anneal", "ptb", 1, 2, 300, 8, Variant::kTimeLimit,
     0x7d98b18a88650ba0ULL},
    {"slack_ptb0_d2", "slack-anneal", "ptb", 0, 2, 400, 1, Variant::kPlain, 0x46f4cac61e02c150ULL},
    {"slack_nmt0_d3", "slack-anneal", "nmt", 0, 3, 300, 9, Variant::kPlain, 0xc122a9b324dfa603ULL},
    {"slack_groups_initial_cifar0_d2", "slack-anneal", "cifar10", 0, 2, 300, 3, Variant::kInitial,
     0x51fb315c738fb130ULL},
    {"chain_ptb0_d3", "chain-anneal", "ptb", 0, 3, 400, 1, Variant::kPlain, 0xee9f7610c5959311ULL},
    {"chain_cifar0_d4", "chain-anneal", "cifar10", 0, 4, 300, 2, Variant::kInitial,
     0x6db7cf9a885e5597ULL},
    {"descent_ptb0_d2", "descent", "ptb", 0, 2, 400, 1, Variant::kPlain, 0x236a42c5b71c55e0ULL},
    {"descent_nmt0_d3", "descent", "nmt", 0, 3, 500, 1, Variant::kPlain, 0xe262899c2331c133ULL},
    {"descent_initial_cifar0_d4", "descent", "cifar10", 0, 4, 400, 1, Variant::kInitial,
     0xac2b43a40051ebf4ULL},
};

TEST(SearchGolden, PlacementsMatchRecordedHashes) {
  for (const GoldenCase& k : kCases) {
    SCOPED_TRACE(k.name);
    const Graph g =
        generate_graph(resolve_family_spec(default_family_spec(k.family)), k.index, 6262);
    const Cluster c = resolve_cluster("", k.devices);
    const int n = g.num_nodes();
    PlacerOptions o;
    o.seed = k.seed;
    o.budget = k.budget;
    switch (k.variant) {
      case Variant::kPlain:
        break;
      case Variant::kGroups:
      case Variant::kGroupsOnly:
        // Groups of three consecutive op ids.
        o.move_groups.resize(n);
        for (int v = 0; v < n; ++v) o.move_groups[v] = v / 3;
        o.move_groups_only = k.variant == Variant::kGroupsOnly;
        break;
      case Variant::kInitial: {
        // Ops dealt to devices by id, in runs of five.
        Placement p(k.devices, n);
        for (int v = 0; v < n; ++v) p.device[v] = (v / 5) % k.devices;
        o.initial = p;
        break;
      }
      case Variant::kTimeLimit:
        o.time_limit_s = 600;  // never reached: the same placement as without the cap
        break;
    }
    if (k.variant == Variant::kInitial && std::string(k.method) == "slack-anneal") {
      o.move_groups.resize(n);
      for (int v = 0; v < n; ++v) o.move_groups[v] = v / 4;
    }
    const Placement p = make_placer(k.method, o)->place(g, c, o);
    char got[32];
    std::snprintf(got, sizeof got, "0x%016llxULL", static_cast<unsigned long long>(fnv1a(p)));
    EXPECT_EQ(fnv1a(p), k.hash) << k.name << " (" << n << " ops): got " << got;
  }
}

}  // namespace
}  // namespace placeto
