#include "improve/scorer_config.h"

#include <yaml-cpp/yaml.h>

#include "common/error.h"
#include "common/yaml_util.h"
#include "improve/what_if.h"
#include "sim/families/family.h"
#include "training/config_overrides.h"

namespace placeto {
namespace {

const ConfigKeys kKeys = {{"families",
                           "graphs",
                           "graph_seed",
                           "devices",
                           "clusters",
                           "starts",
                           "perturb",
                           "max_moves",
                           "keep_rows",
                           "sharpness",
                           "epochs",
                           "batch_states",
                           "lr",
                           "lr_final",
                           "grad_clip",
                           "hidden1",
                           "hidden2",
                           "seed",
                           "keep_checkpoints",
                           "gain_weighting",
                           "rl_epochs",
                           "rl_episodes",
                           "rl_steps",
                           "rl_temperature",
                           "rl_lr",
                           "rl_batch",
                           "lr_end",
                           "clip_norm",
                           "memory_factors",
                           "features",
                           "graph_files",
                           "graph_files_max_devices"},
                          {}};

std::vector<std::string> string_list(const YamlField& f) {
  std::vector<std::string> out;
  if (!f.defined()) return out;
  if (!f.is_sequence()) f.fail("must be a list");
  for (size_t i = 0; i < f.size(); ++i) out.push_back(f.at(i).as_string());
  return out;
}

// lr_end and clip_norm (the names before lr_final and grad_clip): read into the new field,
// refused when both names are given.
void get_alias(const YamlField& f, const char* key, const char* alias, double* out) {
  if (f.has(key) && f.has(alias))
    f.at(alias).fail(std::string("is the older name of '") + key + "': give one of them");
  if (f.has(alias)) f.get(alias, out);
  f.get(key, out);
}

ScorerTrainConfig from_root(YAML::Node root, const std::string& source,
                            const std::vector<std::string>& overrides) {
  if (!root.IsMap() || !root[kScorerConfigKey].IsDefined() || !root[kScorerConfigKey].IsMap())
    throw InputError(source + ": expected a map under the top-level key '" + kScorerConfigKey +
                     "'");
  YAML::Node node = root[kScorerConfigKey];
  apply_overrides(node, overrides, kKeys);
  const YamlField f(node, source, kScorerConfigKey);
  f.check_keys(kKeys.top);
  ScorerTrainConfig c;
  if (f.has("families")) c.families = string_list(f.at("families"));
  f.get("graphs", &c.graphs);
  f.get("graph_seed", &c.graph_seed);
  if (f.has("devices")) {
    const YamlField d = f.at("devices");
    if (!d.is_sequence()) d.fail("must be a list of device counts");
    c.devices.clear();
    for (size_t i = 0; i < d.size(); ++i) {
      const int64_t v = d.at(i).as_int();
      if (v < 2 || v > 64) d.at(i).fail("a device count must be in [2, 64]");
      c.devices.push_back(static_cast<int>(v));
    }
  }
  if (f.has("clusters")) c.clusters = string_list(f.at("clusters"));
  if (f.has("graph_files")) c.graph_files = string_list(f.at("graph_files"));
  f.get("graph_files_max_devices", &c.graph_files_max_devices);
  if (f.has("memory_factors")) {
    const YamlField m = f.at("memory_factors");
    if (!m.is_sequence()) m.fail("must be a list of capacity factors");
    for (size_t i = 0; i < m.size(); ++i) {
      const double v = m.at(i).as_double();
      if (!(v > 0 && v <= 100)) m.at(i).fail("a capacity factor must be in (0, 100]");
      c.memory_factors.push_back(v);
    }
  }
  f.get("features", &c.features);
  f.get("starts", &c.starts);
  f.get("perturb", &c.perturb);
  f.get("max_moves", &c.max_moves);
  f.get("keep_rows", &c.keep_rows);
  f.get("sharpness", &c.sharpness);
  f.get("epochs", &c.epochs);
  f.get("batch_states", &c.batch_states);
  f.get("lr", &c.lr);
  get_alias(f, "lr_final", "lr_end", &c.lr_final);
  get_alias(f, "grad_clip", "clip_norm", &c.grad_clip);
  f.get("hidden1", &c.hidden1);
  f.get("hidden2", &c.hidden2);
  f.get("seed", &c.seed);
  f.get("keep_checkpoints", &c.keep_checkpoints);
  f.get("gain_weighting", &c.gain_weighting);
  f.get("rl_epochs", &c.rl_epochs);
  f.get("rl_episodes", &c.rl_episodes);
  f.get("rl_steps", &c.rl_steps);
  f.get("rl_temperature", &c.rl_temperature);
  f.get("rl_lr", &c.rl_lr);
  f.get("rl_batch", &c.rl_batch);
  auto need = [&](bool ok, const std::string& key, const std::string& rule) {
    if (ok) return;
    // The key as the file spells it (an alias), or the field's name when it was defaulted.
    std::string k = key;
    if (key == "lr_final" && !f.has(key) && f.has("lr_end")) k = "lr_end";
    if (key == "grad_clip" && !f.has(key) && f.has("clip_norm")) k = "clip_norm";
    f.at(k).fail(rule);
  };
  for (const std::string& fam : c.families) {
    (void)default_family_spec(fam);  // names checked
    if (evaluation_only_family(fam))
      f.at("families").fail("'" + fam + "' is an evaluation-only family and is never trained on");
  }
  need(c.features >= 0 && c.features <= WhatIf::kNumFeatures, "features",
       "must be 0 (all) or a count of what-if columns in [1, " +
           std::to_string(WhatIf::kNumFeatures) + "]");
  need(c.graphs >= 1 && c.graphs <= 10000, "graphs", "must be in [1, 10000]");
  need(c.devices.size() + c.clusters.size() >= 1, "devices", "no devices and no clusters");
  need(!c.families.empty() || !c.graph_files.empty(), "families",
       "must name at least one family (or give graph_files)");
  need(c.graph_files_max_devices >= 0, "graph_files_max_devices",
       "must be >= 0 (0: every cluster)");
  need(c.starts >= 1 && c.starts <= 100, "starts", "must be in [1, 100]");
  need(c.perturb >= 0 && c.perturb <= 1, "perturb", "must be in [0, 1]");
  need(c.max_moves >= 1 && c.max_moves <= 100000, "max_moves", "must be in [1, 100000]");
  need(c.keep_rows >= 2 && c.keep_rows <= 100000, "keep_rows", "must be in [2, 100000]");
  need(c.sharpness > 0 && c.sharpness <= 100, "sharpness", "must be in (0, 100]");
  need(c.epochs >= 1 && c.epochs <= 100000, "epochs", "must be in [1, 100000]");
  need(c.batch_states >= 1 && c.batch_states <= 100000, "batch_states", "must be in [1, 100000]");
  need(c.lr > 0 && c.lr < 1, "lr", "must be in (0, 1)");
  need(c.lr_final > 0 && c.lr_final <= c.lr, "lr_final", "must be in (0, lr]");
  need(c.grad_clip >= 0, "grad_clip", "must be >= 0 (0: no clipping)");
  need(c.hidden1 >= 1 && c.hidden1 <= 1024, "hidden1", "must be in [1, 1024]");
  need(c.hidden2 >= 1 && c.hidden2 <= 1024, "hidden2", "must be in [1, 1024]");
  need(c.keep_checkpoints >= 1, "keep_checkpoints", "must be >= 1");
  need(c.rl_epochs >= 0 && c.rl_epochs <= 100000, "rl_epochs", "must be in [0, 100000]");
  need(c.rl_episodes >= 2 && c.rl_episodes <= 1000, "rl_episodes",
       "must be in [2, 1000] (the baseline is the other episodes' mean)");
  need(c.rl_steps >= 1 && c.rl_steps <= 100000, "rl_steps", "must be in [1, 100000]");
  need(c.rl_temperature > 0 && c.rl_temperature <= 100, "rl_temperature", "must be in (0, 100]");
  need(c.rl_lr > 0 && c.rl_lr < 1, "rl_lr", "must be in (0, 1)");
  need(c.rl_batch >= 1 && c.rl_batch <= 100000, "rl_batch", "must be in [1, 100000]");
  return c;
}

}  // namespace

ScorerTrainConfig load_scorer_train_config(const std::string& path,
                                           const std::vector<std::string>& overrides) {
  return from_root(load_yaml_file(path), path, overrides);
}

ScorerTrainConfig parse_scorer_train_config(const std::string& yaml_text, const std::string& source,
                                            const std::vector<std::string>& overrides) {
  return from_root(parse_yaml_text(yaml_text, source), source, overrides);
}

std::string scorer_train_config_to_yaml(const ScorerTrainConfig& c) {
  YAML::Emitter e;
  e << YAML::BeginMap << YAML::Key << kScorerConfigKey << YAML::Value << YAML::BeginMap;
  e << YAML::Key << "families" << YAML::Value << YAML::Flow << c.families;
  e << YAML::Key << "graphs" << YAML::Value << c.graphs;
  e << YAML::Key << "graph_seed" << YAML::Value << c.graph_seed;
  e << YAML::Key << "devices" << YAML::Value << YAML::Flow << c.devices;
  e << YAML::Key << "clusters" << YAML::Value << YAML::Flow << c.clusters;
  if (!c.graph_files.empty()) {
    e << YAML::Key << "graph_files" << YAML::Value << YAML::Flow << c.graph_files;
    e << YAML::Key << "graph_files_max_devices" << YAML::Value << c.graph_files_max_devices;
  }
  if (c.features > 0) e << YAML::Key << "features" << YAML::Value << c.features;
  if (!c.memory_factors.empty())
    e << YAML::Key << "memory_factors" << YAML::Value << YAML::Flow << c.memory_factors;
  e << YAML::Key << "starts" << YAML::Value << c.starts;
  e << YAML::Key << "perturb" << YAML::Value << c.perturb;
  e << YAML::Key << "max_moves" << YAML::Value << c.max_moves;
  e << YAML::Key << "keep_rows" << YAML::Value << c.keep_rows;
  e << YAML::Key << "sharpness" << YAML::Value << c.sharpness;
  e << YAML::Key << "epochs" << YAML::Value << c.epochs;
  e << YAML::Key << "batch_states" << YAML::Value << c.batch_states;
  e << YAML::Key << "lr" << YAML::Value << c.lr;
  e << YAML::Key << "lr_final" << YAML::Value << c.lr_final;
  e << YAML::Key << "grad_clip" << YAML::Value << c.grad_clip;
  e << YAML::Key << "hidden1" << YAML::Value << c.hidden1;
  e << YAML::Key << "hidden2" << YAML::Value << c.hidden2;
  e << YAML::Key << "seed" << YAML::Value << c.seed;
  e << YAML::Key << "keep_checkpoints" << YAML::Value << c.keep_checkpoints;
  e << YAML::Key << "gain_weighting" << YAML::Value << c.gain_weighting;
  e << YAML::Key << "rl_epochs" << YAML::Value << c.rl_epochs;
  e << YAML::Key << "rl_episodes" << YAML::Value << c.rl_episodes;
  e << YAML::Key << "rl_steps" << YAML::Value << c.rl_steps;
  e << YAML::Key << "rl_temperature" << YAML::Value << c.rl_temperature;
  e << YAML::Key << "rl_lr" << YAML::Value << c.rl_lr;
  e << YAML::Key << "rl_batch" << YAML::Value << c.rl_batch;
  e << YAML::EndMap << YAML::EndMap;
  return std::string(e.c_str()) + "\n";
}

}  // namespace placeto
