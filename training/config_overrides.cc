#include "training/config_overrides.h"

#include <sstream>

#include "common/error.h"
#include "common/yaml_util.h"

namespace placeto {

void apply_override(YAML::Node root, const std::string& arg, const ConfigKeys& keys) {
  const auto eq = arg.find('=');
  if (eq == std::string::npos || eq == 0)
    throw InputError("command line: override '" + arg + "' is not of the form key=value");
  const std::string key = arg.substr(0, eq), value = arg.substr(eq + 1);
  std::vector<std::string> parts;
  std::stringstream ss(key);
  for (std::string p; std::getline(ss, p, '.');) parts.push_back(p);
  if (parts.size() > 2) throw InputError("command line: override key '" + key + "' is too deep");
  const std::vector<std::string>* known = &keys.top;
  bool is_section = false;
  for (const auto& [name, sub] : keys.sections) {
    if (parts.size() == 2 && parts[0] == name) known = &sub;
    if (parts.size() == 1 && parts[0] == name) is_section = true;
  }
  if (parts.size() == 2 && known == &keys.top)
    throw InputError("command line: '" + parts[0] + "' has no sub-keys (in '" + key + "')");
  const std::string& leaf = parts.back();
  bool ok = false;
  for (const auto& k : *known) ok = ok || k == leaf;
  if (!ok || is_section) {
    const std::string hint = did_you_mean_any(leaf, known->data(), known->size());
    std::string msg = "command line: unknown config key '" + key + "'";
    if (!hint.empty())
      msg +=
          " (did you mean '" + (parts.size() == 2 ? parts[0] + "." : std::string()) + hint + "'?)";
    throw InputError(msg);
  }
  YAML::Node v = parse_yaml_text(value, "command line override '" + arg + "'");
  if (parts.size() == 1) {
    root[leaf] = v;
    return;
  }
  // Setting "env.start" when the file says "env: 3": yaml-cpp's operator[] would throw
  // BadSubscript on the scalar.
  const YAML::Node& const_root = root;
  const YAML::Node section = const_root[parts[0]];
  if (section.IsDefined() && !section.IsNull() && !section.IsMap())
    throw InputError("command line: cannot apply override '" + arg + "': '" + parts[0] +
                     "' in the config file is not a mapping");
  root[parts[0]][leaf] = v;
}

void apply_overrides(YAML::Node root, const std::vector<std::string>& args,
                     const ConfigKeys& keys) {
  for (const std::string& a : args) apply_override(root, a, keys);
}

}  // namespace placeto
