#include "common/checkpoint/checkpoint_compat.h"

#include "common/yaml_util.h"

namespace placeto {
namespace {

void flatten(const YAML::Node& node, const std::string& prefix,
             std::map<std::string, std::string>* out) {
  if (node.IsMap()) {
    if (node.size() == 0) (*out)[prefix] = "{}";
    for (const auto& kv : node) {
      const std::string key = kv.first.as<std::string>();
      flatten(kv.second, prefix.empty() ? key : prefix + "." + key, out);
    }
  } else if (node.IsSequence()) {
    if (node.size() == 0) (*out)[prefix] = "[]";
    for (size_t i = 0; i < node.size(); ++i)
      flatten(node[i], prefix + "[" + std::to_string(i) + "]", out);
  } else if (node.IsScalar()) {
    (*out)[prefix] = node.Scalar();
  } else {
    (*out)[prefix] = "null";
  }
}

bool ignored(const std::string& key, const std::vector<std::string>& ignore_keys) {
  for (const std::string& k : ignore_keys) {
    if (key == k) return true;
    if (key.size() > k.size() && key.compare(0, k.size(), k) == 0 &&
        (key[k.size()] == '.' || key[k.size()] == '['))
      return true;
  }
  return false;
}

std::string join(const std::vector<std::string>& parts, const std::string& sep) {
  std::string s;
  for (const auto& p : parts) s += (s.empty() ? "" : sep) + p;
  return s;
}

}  // namespace

void check_model_shapes(const CheckpointData& data, const ShapeMap& expected,
                        const std::string& source) {
  std::vector<std::string> problems;
  for (const auto& [name, shape] : expected) {
    auto it = data.model.find(name);
    if (it == data.model.end()) {
      problems.push_back(name + ": missing from the checkpoint (model " + shape_string(shape) +
                         ")");
    } else if (it->second.shape != shape) {
      problems.push_back(name + ": checkpoint " + shape_string(it->second.shape) + ", model " +
                         shape_string(shape));
    }
  }
  for (const auto& [name, array] : data.model)
    if (!expected.count(name))
      problems.push_back(name + ": in the checkpoint (" + shape_string(array.shape) +
                         ") but not in the model");
  for (const auto* moments : {&data.optim_exp_avg, &data.optim_exp_avg_sq}) {
    const char* which = moments == &data.optim_exp_avg ? "exp_avg" : "exp_avg_sq";
    for (const auto& [name, array] : *moments) {
      auto it = expected.find(name);
      if (it == expected.end())
        problems.push_back("optim " + name + "/" + which + ": no such model parameter");
      else if (it->second != array.shape)
        problems.push_back("optim " + name + "/" + which + ": checkpoint " +
                           shape_string(array.shape) + ", model " + shape_string(it->second));
    }
  }
  if (!problems.empty())
    throw InputError(source + ": checkpoint does not fit the model: " + join(problems, "; "));
}

std::vector<std::string> config_differences(const std::string& checkpoint_yaml,
                                            const std::string& current_yaml,
                                            const std::vector<std::string>& ignore_keys) {
  std::map<std::string, std::string> a, b;
  flatten(parse_yaml_text(checkpoint_yaml, "checkpoint config"), "", &a);
  flatten(parse_yaml_text(current_yaml, "current config"), "", &b);
  std::vector<std::string> diffs;
  auto describe = [](const std::map<std::string, std::string>& m, const std::string& key) {
    auto it = m.find(key);
    return it == m.end() ? std::string("<absent>") : it->second;
  };
  std::map<std::string, int> keys;
  for (const auto& kv : a) keys[kv.first] = 0;
  for (const auto& kv : b) keys[kv.first] = 0;
  for (const auto& [key, unused] : keys) {
    if (ignored(key, ignore_keys)) continue;
    const std::string va = describe(a, key), vb = describe(b, key);
    if (va != vb || a.count(key) != b.count(key))
      diffs.push_back((key.empty() ? "<root>" : key) + " (checkpoint: " + va + ", current: " + vb +
                      ")");
  }
  return diffs;
}

void check_config_matches(const std::string& checkpoint_yaml, const std::string& current_yaml,
                          const std::vector<std::string>& ignore_keys, const std::string& source) {
  const std::vector<std::string> diffs =
      config_differences(checkpoint_yaml, current_yaml, ignore_keys);
  if (!diffs.empty())
    throw InputError(source +
                     ": the configuration does not match the checkpoint's; differing "
                     "keys: " +
                     join(diffs, "; "));
}

}  // namespace placeto
