#include "learner/train_config.h"

#include <algorithm>
#include <optional>
#include <sstream>

#include "common/error.h"
#include "common/files.h"
#include "common/yaml_util.h"
#include "sim/placers/memory.h"
#include "sim/placers/registry.h"
#include "training/config_overrides.h"

namespace placeto {

bool parse_device_count(const std::string& text, int* count) {
  if (text.empty() || text.size() > 9 ||
      !std::all_of(text.begin(), text.end(), [](char ch) { return ch >= '0' && ch <= '9'; }))
    return false;
  *count = std::stoi(text);
  return true;
}

namespace {

const std::vector<std::string> kTopKeys = {"family_dir",
                                           "devices",
                                           "cluster",
                                           "seed",
                                           "iterations",
                                           "episodes_per_iteration",
                                           "lr",
                                           "lr_final",
                                           "grad_clip",
                                           "entropy_beta",
                                           "baseline",
                                           "baseline_window",
                                           "discount",
                                           "normalize_advantages",
                                           "algorithm",
                                           "ppo_epochs",
                                           "ppo_clip",
                                           "gae_lambda",
                                           "value_coef",
                                           "kl_coef",
                                           "imitation_teacher",
                                           "imitation_iterations",
                                           "checkpoint_every",
                                           "keep_checkpoints",
                                           "eval_every",
                                           "eval_samples",
                                           "comm",
                                           "collective_timeout_s",
                                           "log_level",
                                           "policy",
                                           "env",
                                           "cluster_mix"};
const std::vector<std::string> kPolicyKeys = {
    "hidden",        "message_passing", "rounds",          "parallel_aggregation", "parallel_k",
    "with_memory",   "lookahead",       "memory_features", "any_devices",          "coarse_above",
    "coarse_groups", "boundary_sims",   "fine_rewards"};
const std::vector<std::string> kEnvKeys = {"start",
                                           "order",
                                           "memory_penalty_s_per_gb",
                                           "max_mem_gb",
                                           "normalize_reward",
                                           "start_seed",
                                           "reward",
                                           "action",
                                           "passes",
                                           "levels",
                                           "memory_factors"};

ConfigKeys config_keys() { return {kTopKeys, {{"policy", kPolicyKeys}, {"env", kEnvKeys}}}; }

// Reads an enum-valued key once: a name outside the table is an error naming the file, the
// key and the allowed names.
template <typename E, size_t N>
void get_enum(const YamlField& f, const char* key, const char* full_key, const std::string& source,
              const EnumName<E> (&table)[N], E* out) {
  if (!f.has(key)) return;
  const std::string text = f.at(key).as_string();
  const std::optional<E> v = parse_enum(text, table);
  if (!v)
    throw_input_error(source, full_key, "'" + text + "' is not one of " + enum_choices(table));
  *out = *v;
}

}  // namespace

TrainConfig parse_train_config(const std::string& yaml_text, const std::string& source,
                               const std::vector<std::string>& overrides) {
  YAML::Node root = parse_yaml_text(yaml_text, source);
  if (!root.IsDefined() || root.IsNull()) root = YAML::Node(YAML::NodeType::Map);
  if (!root.IsMap()) throw InputError(source + ": a training config must be a mapping");
  apply_overrides(root, overrides, config_keys());
  YamlField f(root, source, "");
  f.check_keys(kTopKeys);
  TrainConfig c;
  f.get("family_dir", &c.family_dir);
  f.get("devices", &c.devices);
  f.get("cluster", &c.cluster);
  if (f.has("seed")) {
    int64_t s = f.at("seed").as_int();
    if (s < 0) f.at("seed").fail("must be >= 0");
    c.seed = static_cast<uint64_t>(s);
  }
  f.get("iterations", &c.iterations);
  f.get("episodes_per_iteration", &c.episodes_per_iteration);
  f.get("lr", &c.lr);
  f.get("lr_final", &c.lr_final);
  f.get("grad_clip", &c.grad_clip);
  f.get("entropy_beta", &c.entropy_beta);
  get_enum(f, "baseline", "baseline", source, kBaselineNames, &c.baseline);
  f.get("baseline_window", &c.baseline_window);
  f.get("discount", &c.discount);
  f.get("normalize_advantages", &c.normalize_advantages);
  get_enum(f, "algorithm", "algorithm", source, kAlgorithmNames, &c.algorithm);
  f.get("ppo_epochs", &c.ppo_epochs);
  f.get("ppo_clip", &c.ppo_clip);
  f.get("gae_lambda", &c.gae_lambda);
  f.get("value_coef", &c.value_coef);
  f.get("kl_coef", &c.kl_coef);
  f.get("imitation_teacher", &c.imitation_teacher);
  f.get("imitation_iterations", &c.imitation_iterations);
  f.get("checkpoint_every", &c.checkpoint_every);
  f.get("keep_checkpoints", &c.keep_checkpoints);
  f.get("eval_every", &c.eval_every);
  f.get("eval_samples", &c.eval_samples);
  get_enum(f, "comm", "comm", source, kCommBackendNames, &c.comm);
  f.get("collective_timeout_s", &c.collective_timeout_s);
  f.get("log_level", &c.log_level);
  YamlField p = f.at("policy");
  p.check_keys(kPolicyKeys);
  p.get("hidden", &c.policy.hidden);
  get_enum(p, "message_passing", "policy.message_passing", source, kMessagePassingNames,
           &c.policy.message_passing);
  p.get("rounds", &c.policy.rounds);
  p.get("parallel_aggregation", &c.policy.parallel_aggregation);
  p.get("parallel_k", &c.policy.parallel_k);
  p.get("with_memory", &c.policy.with_memory);
  p.get("lookahead", &c.policy.lookahead);
  p.get("memory_features", &c.policy.memory_features);
  p.get("any_devices", &c.policy.any_devices);
  p.get("coarse_above", &c.policy.coarse_above);
  p.get("coarse_groups", &c.policy.coarse_groups);
  p.get("boundary_sims", &c.policy.boundary_sims);
  p.get("fine_rewards", &c.policy.fine_rewards);
  YamlField e = f.at("env");
  e.check_keys(kEnvKeys);
  if (e.has("start")) c.env.start = parse_episode_start(e.at("start").as_string(), source);
  get_enum(e, "order", "env.order", source, kNodeOrderNames, &c.env.order);
  get_enum(e, "action", "env.action", source, kActionUnitNames, &c.env.action);
  e.get("memory_penalty_s_per_gb", &c.env.memory_penalty_s_per_gb);
  e.get("max_mem_gb", &c.env.max_mem_gb);
  e.get("normalize_reward", &c.env.normalize_reward);
  get_enum(e, "reward", "env.reward", source, kRewardNames, &c.env.reward);
  e.get("passes", &c.env.passes);
  if (e.has("levels")) {
    YamlField l = e.at("levels");
    if (!l.is_sequence()) l.fail("must be a list of ops per group, e.g. [8, 1]");
    c.env.levels.clear();
    for (size_t i = 0; i < l.size(); ++i)
      c.env.levels.push_back(static_cast<int>(l.at(i).as_int()));
  }
  if (e.has("memory_factors")) {
    YamlField m = e.at("memory_factors");
    if (!m.is_sequence()) m.fail("must be a list of factors, e.g. [0, 1.2] (0: uncapped)");
    for (size_t i = 0; i < m.size(); ++i) {
      const double x = m.at(i).as_double();  // finite, or InputError
      if (x < 0)
        m.at(i).fail("a factor must be 0 (uncapped) or a finite number > 0, got '" +
                     m.at(i).as_string() + "'");
      c.memory_factors.push_back(x);
    }
  }
  if (f.has("cluster_mix")) {
    YamlField m = f.at("cluster_mix");
    if (!m.is_sequence())
      m.fail("must be a list of device counts or cluster files, e.g. [2, 4, 8, cluster.yaml]");
    for (size_t i = 0; i < m.size(); ++i) c.cluster_mix.push_back(m.at(i).as_string());
  }
  if (e.has("start_seed")) c.env.start_seed = static_cast<uint64_t>(e.at("start_seed").as_int());

  auto bad = [&](const std::string& key, const std::string& msg) {
    throw_input_error(source, key, msg);
  };
  if (c.devices < 1 || c.devices > 1024)
    bad("devices", "must be in [1, 1024], got " + std::to_string(c.devices));
  if (c.iterations < 1) bad("iterations", "must be >= 1");
  if (c.episodes_per_iteration < 1) bad("episodes_per_iteration", "must be >= 1");
  if (!(c.lr > 0) || !(c.lr_final > 0)) bad("lr", "lr and lr_final must be > 0");
  if (c.grad_clip < 0) bad("grad_clip", "must be >= 0 (0 = no clipping)");
  if (c.entropy_beta < 0) bad("entropy_beta", "must be >= 0");
  if (c.baseline == BaselineKind::kLeaveOneOut && c.episodes_per_iteration < 2)
    bad("baseline", "leave_one_out needs episodes_per_iteration >= 2, got " +
                        std::to_string(c.episodes_per_iteration));
  if (c.baseline_window < 1) bad("baseline_window", "must be >= 1");
  if (c.ppo_epochs < 1 || c.ppo_epochs > 100)
    bad("ppo_epochs", "must be in [1, 100], got " + std::to_string(c.ppo_epochs));
  if (!(c.ppo_clip > 0 && c.ppo_clip < 1))
    bad("ppo_clip", "must be in (0, 1), got " + std::to_string(c.ppo_clip));
  if (!(c.gae_lambda >= 0 && c.gae_lambda <= 1))
    bad("gae_lambda", "must be in [0, 1], got " + std::to_string(c.gae_lambda));
  if (!(c.value_coef >= 0)) bad("value_coef", "must be >= 0");
  if (!(c.kl_coef >= 0)) bad("kl_coef", "must be >= 0");
  if (c.kl_coef > 0 && c.imitation_iterations == 0)
    bad("kl_coef", "keeps RL near the imitated policy: it needs imitation_iterations > 0");
  if (!(c.discount > 0 && c.discount <= 1))
    bad("discount", "must be in (0, 1], got " + std::to_string(c.discount));
  if (c.imitation_iterations < 0) bad("imitation_iterations", "must be >= 0");
  if (c.imitation_iterations > 0 && c.imitation_teacher.empty())
    bad("imitation_teacher", "must name a placer when imitation_iterations > 0");
  if (!c.imitation_teacher.empty()) {
    const auto& names = placer_names();
    if (std::find(names.begin(), names.end(), c.imitation_teacher) == names.end()) {
      std::string hint = did_you_mean_any(c.imitation_teacher, names.data(), names.size());
      bad("imitation_teacher", "'" + c.imitation_teacher + "' is not a placer" +
                                   (hint.empty() ? "" : " (did you mean '" + hint + "'?)"));
    }
  }
  if (c.checkpoint_every < 1) bad("checkpoint_every", "must be >= 1");
  if (c.keep_checkpoints < 1) bad("keep_checkpoints", "must be >= 1");
  if (c.eval_every < 0) bad("eval_every", "must be >= 0");
  if (c.eval_samples < 1) bad("eval_samples", "must be >= 1");
  if (!(c.collective_timeout_s > 0)) bad("collective_timeout_s", "must be > 0");
  if (c.policy.hidden < 1 || c.policy.hidden > 4096)
    bad("policy.hidden", "must be in [1, 4096], got " + std::to_string(c.policy.hidden));
  if (c.policy.rounds < 0 || c.policy.rounds > 64) bad("policy.rounds", "must be in [0, 64]");
  if (c.policy.parallel_k < 0) bad("policy.parallel_k", "must be >= 0");
  if (c.policy.memory_features && !c.policy.lookahead)
    bad("policy.memory_features",
        "true needs policy.lookahead: true (its columns are what-if columns)");
  if (c.policy.any_devices && !c.policy.lookahead)
    bad("policy.any_devices",
        "true needs policy.lookahead: true (devices are scored from their "
        "what-if and device columns)");
  if (c.policy.coarse_above < 0) bad("policy.coarse_above", "must be >= 0 (0: never coarsen)");
  if (c.policy.coarse_groups < 1 || c.policy.coarse_groups > 65536)
    bad("policy.coarse_groups",
        "must be in [1, 65536], got " + std::to_string(c.policy.coarse_groups));
  if (c.policy.boundary_sims < 0) bad("policy.boundary_sims", "must be >= 0 (0: no pass)");
  for (size_t i = 0; i < c.cluster_mix.size(); ++i) {
    const std::string& entry = c.cluster_mix[i];
    const std::string field = "cluster_mix[" + std::to_string(i) + "]";
    int count = 0;
    if (parse_device_count(entry, &count)) {
      if (count < 1 || count > 1024)
        bad(field, "a device count must be in [1, 1024], got " + entry);
      if (count != c.devices && !c.policy.any_devices)
        bad(field, entry +
                       " devices needs policy.any_devices: true (the network has one logit "
                       "per device, " +
                       std::to_string(c.devices) + ")");
    } else if (!c.policy.any_devices) {
      bad(field, "'" + entry + "': a cluster file needs policy.any_devices: true");
    }
  }
  const bool capped =
      std::any_of(c.memory_factors.begin(), c.memory_factors.end(), [](double x) { return x > 0; });
  if (capped && c.env.memory_penalty_s_per_gb > 0)
    bad("env.memory_penalty_s_per_gb",
        "must be 0 with env.memory_factors: on a cluster with capacities the reward follows the "
        "memory rule, got " +
            std::to_string(c.env.memory_penalty_s_per_gb));
  validate_env_config(c.env, source);
  return c;
}

TrainConfig load_train_config(const std::string& path, const std::vector<std::string>& overrides) {
  return parse_train_config(read_file(path), path, overrides);
}

std::string train_config_to_yaml(const TrainConfig& c) {
  YAML::Emitter out;
  out.SetDoublePrecision(17);
  out << YAML::BeginMap;
  out << YAML::Key << "family_dir" << YAML::Value << c.family_dir;
  out << YAML::Key << "devices" << YAML::Value << c.devices;
  out << YAML::Key << "cluster" << YAML::Value << c.cluster;
  out << YAML::Key << "seed" << YAML::Value << c.seed;
  out << YAML::Key << "iterations" << YAML::Value << c.iterations;
  out << YAML::Key << "episodes_per_iteration" << YAML::Value << c.episodes_per_iteration;
  out << YAML::Key << "lr" << YAML::Value << c.lr;
  out << YAML::Key << "lr_final" << YAML::Value << c.lr_final;
  out << YAML::Key << "grad_clip" << YAML::Value << c.grad_clip;
  out << YAML::Key << "entropy_beta" << YAML::Value << c.entropy_beta;
  out << YAML::Key << "baseline" << YAML::Value << enum_name(c.baseline, kBaselineNames);
  out << YAML::Key << "baseline_window" << YAML::Value << c.baseline_window;
  out << YAML::Key << "discount" << YAML::Value << c.discount;
  out << YAML::Key << "normalize_advantages" << YAML::Value << c.normalize_advantages;
  out << YAML::Key << "algorithm" << YAML::Value << enum_name(c.algorithm, kAlgorithmNames);
  out << YAML::Key << "ppo_epochs" << YAML::Value << c.ppo_epochs;
  out << YAML::Key << "ppo_clip" << YAML::Value << c.ppo_clip;
  out << YAML::Key << "gae_lambda" << YAML::Value << c.gae_lambda;
  out << YAML::Key << "value_coef" << YAML::Value << c.value_coef;
  out << YAML::Key << "kl_coef" << YAML::Value << c.kl_coef;
  out << YAML::Key << "imitation_teacher" << YAML::Value << c.imitation_teacher;
  out << YAML::Key << "imitation_iterations" << YAML::Value << c.imitation_iterations;
  out << YAML::Key << "checkpoint_every" << YAML::Value << c.checkpoint_every;
  out << YAML::Key << "keep_checkpoints" << YAML::Value << c.keep_checkpoints;
  out << YAML::Key << "eval_every" << YAML::Value << c.eval_every;
  out << YAML::Key << "eval_samples" << YAML::Value << c.eval_samples;
  out << YAML::Key << "comm" << YAML::Value << enum_name(c.comm, kCommBackendNames);
  out << YAML::Key << "collective_timeout_s" << YAML::Value << c.collective_timeout_s;
  out << YAML::Key << "log_level" << YAML::Value << c.log_level;
  if (!c.cluster_mix.empty())
    out << YAML::Key << "cluster_mix" << YAML::Value << YAML::Flow << c.cluster_mix;
  out << YAML::Key << "policy" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "hidden" << YAML::Value << c.policy.hidden;
  out << YAML::Key << "message_passing" << YAML::Value
      << enum_name(c.policy.message_passing, kMessagePassingNames);
  out << YAML::Key << "rounds" << YAML::Value << c.policy.rounds;
  out << YAML::Key << "parallel_aggregation" << YAML::Value << c.policy.parallel_aggregation;
  out << YAML::Key << "parallel_k" << YAML::Value << c.policy.parallel_k;
  out << YAML::Key << "with_memory" << YAML::Value << c.policy.with_memory;
  out << YAML::Key << "lookahead" << YAML::Value << c.policy.lookahead;
  out << YAML::Key << "memory_features" << YAML::Value << c.policy.memory_features;
  out << YAML::Key << "any_devices" << YAML::Value << c.policy.any_devices;
  out << YAML::Key << "coarse_above" << YAML::Value << c.policy.coarse_above;
  out << YAML::Key << "coarse_groups" << YAML::Value << c.policy.coarse_groups;
  out << YAML::Key << "boundary_sims" << YAML::Value << c.policy.boundary_sims;
  out << YAML::Key << "fine_rewards" << YAML::Value << c.policy.fine_rewards;
  out << YAML::EndMap;
  out << YAML::Key << "env" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "start" << YAML::Value << episode_start_name(c.env.start);
  out << YAML::Key << "order" << YAML::Value << enum_name(c.env.order, kNodeOrderNames);
  out << YAML::Key << "action" << YAML::Value << enum_name(c.env.action, kActionUnitNames);
  out << YAML::Key << "memory_penalty_s_per_gb" << YAML::Value << c.env.memory_penalty_s_per_gb;
  out << YAML::Key << "max_mem_gb" << YAML::Value << c.env.max_mem_gb;
  out << YAML::Key << "normalize_reward" << YAML::Value << c.env.normalize_reward;
  out << YAML::Key << "start_seed" << YAML::Value << c.env.start_seed;
  out << YAML::Key << "reward" << YAML::Value << enum_name(c.env.reward, kRewardNames);
  out << YAML::Key << "passes" << YAML::Value << c.env.passes;
  out << YAML::Key << "levels" << YAML::Value << YAML::Flow << c.env.levels;
  out << YAML::Key << "memory_factors" << YAML::Value << YAML::Flow << c.memory_factors;
  out << YAML::EndMap << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

Cluster cluster_for_graph(const TrainConfig& c, const Cluster& cluster, const Graph& g, size_t i) {
  Cluster base = cluster;
  if (!c.cluster_mix.empty()) {
    const size_t every = std::max<size_t>(1, c.memory_factors.size());
    const std::string& entry = c.cluster_mix[(i / every) % c.cluster_mix.size()];
    int count = 0;
    base =
        parse_device_count(entry, &count) ? resolve_cluster("", count) : resolve_cluster(entry, 0);
  }
  if (c.memory_factors.empty()) return base;
  const double factor = c.memory_factors[i % c.memory_factors.size()];
  return factor > 0 ? with_balanced_capacity(base, g, factor) : base;
}

}  // namespace placeto
