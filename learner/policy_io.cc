#include "learner/policy_io.h"

#include <stdexcept>

#include "common/checkpoint/checkpoint_store.h"
#include "common/error.h"
#include "learner/checkpointing.h"
#include "learner/param_vector.h"
#include "learner/policy_catalog.h"
#include "learner/trainer.h"
#include "sim/placers/registry.h"

namespace placeto {

HierarchyOptions hierarchy_options(const TrainConfig& c) {
  HierarchyOptions h;
  h.above = c.policy.coarse_above;
  h.groups = c.policy.coarse_groups;
  h.boundary_sims = c.policy.boundary_sims;
  h.fine_rewards = c.policy.fine_rewards;
  return h;
}

LoadedPolicy load_policy(const std::string& path, const std::vector<std::string>& overrides) {
  std::string file;
  const CheckpointData data = read_checkpoint_any(path, &file);
  if (data.model.count("scorer/w1") > 0)
    throw InputError(file +
                     ": a learned-search scorer checkpoint, not a Placeto policy: place with "
                     "--method scorer-greedy, policy-search or auto");
  LoadedPolicy lp;
  lp.path = file;
  lp.config = parse_train_config(data.config_yaml, file + " (/meta config_yaml)", overrides);
  lp.net = PolicyNet(make_policy_config(lp.config));
  std::vector<float> params = params_from_checkpoint(data, param_layout(lp.net), file);
  set_flat_params(lp.net, params);
  lp.net->eval();
  return lp;
}

PolicyPlacement place_with_policy(LoadedPolicy& policy, const Graph& g, const Cluster& cluster,
                                  int samples, uint64_t seed) {
  if (!policy.net->places(cluster.num_devices()))
    throw InputError(policy.path + ": the policy was trained for " +
                     std::to_string(policy.config.devices) + " devices, but the cluster has " +
                     std::to_string(cluster.num_devices()) +
                     " (train a policy for that count, or pass --devices " +
                     std::to_string(policy.config.devices) + ")");
  return place_with_net(policy.net, policy.config, g, cluster, samples, seed);
}

PolicyPlacement place_with_net(PolicyNet& net, const TrainConfig& config, const Graph& g,
                               const Cluster& cluster, int samples, uint64_t seed) {
  PLACETO_CHECK(net->places(cluster.num_devices()));
  return place_with_network(net, config.env,
                            config.policy.message_passing == MessagePassing::kSweep, g, cluster,
                            samples, seed, hierarchy_options(config));
}

namespace {

LearnedPlacerSetup setup_from_checkpoint(const std::string& checkpoint,
                                         const std::vector<std::string>& overrides) {
  LoadedPolicy p = load_policy(checkpoint, overrides);
  LearnedPlacerSetup s;
  s.net = p.net;
  s.env = p.config.env;
  s.sweep = p.config.policy.message_passing == MessagePassing::kSweep;
  s.devices = p.config.devices;
  s.hierarchy = hierarchy_options(p.config);
  s.source = p.path;
  return s;
}

}  // namespace

std::unique_ptr<Placer> make_policy_placer_by_name(const std::string& name,
                                                   const PlacerOptions& options) {
  if (name == "policy")
    return make_policy_placer(
        setup_from_checkpoint(options.checkpoint, options.checkpoint_overrides));
  if (name == "policy+anneal")
    return make_policy_anneal_placer(
        setup_from_checkpoint(options.checkpoint, options.checkpoint_overrides));
  throw std::logic_error("make_policy_placer_by_name: no placer '" + name + "'");
}

void register_policy_placers() {
  if (find_placer("policy")) return;
  for (PlacerInfo info : policy_placer_catalog()) {
    const std::string name = info.name;
    info.make = [name](const PlacerOptions& o) { return make_policy_placer_by_name(name, o); };
    register_placer(std::move(info));
  }
}

}  // namespace placeto
