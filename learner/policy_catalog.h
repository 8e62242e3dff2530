// The Placeto policy's placers as the registry lists them (name, summary, kind, options), without
// their constructors.  Header-only and torch-free: `placeto` registers them from this list and
// loads LibTorch (launch/torch_module.h) only when one is built; register_policy_placers()
// (policy_io.h) adds the constructors.
#pragma once

#include <vector>

#include "sim/placers/registry.h"

namespace placeto {

inline std::vector<PlacerInfo> policy_placer_catalog() {
  PlacerInfo policy;
  policy.name = "policy";
  policy.summary =
      "the Placeto policy of a checkpoint (--checkpoint): best of --samples episodes (1 = "
      "greedy)";
  policy.kind = PlacerKind::kLearned;
  policy.stochastic = true;
  policy.takes_samples = true;
  policy.needs_checkpoint = true;
  PlacerInfo seeded = policy;
  seeded.name = "policy+anneal";
  seeded.summary = "anneal from the policy's placement (--budget: anneal's; --time-ms: in all)";
  seeded.kind = PlacerKind::kSearch;
  seeded.takes_budget = true;
  return {policy, seeded};
}

}  // namespace placeto
