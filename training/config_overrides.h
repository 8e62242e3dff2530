// Command-line overrides of a YAML training config ("key=value", "section.key=value"), checked
// against the config's keys with "did you mean" for a misspelt one.  Both trainers' parsers
// apply them to the YAML tree before reading it into their plain config struct, and write the
// resolved struct back whole (the run directory's config.yaml, every checkpoint's config).
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>
#include <utility>
#include <vector>

namespace placeto {

struct ConfigKeys {
  std::vector<std::string> top;  // keys of the config's map
  // Keys that hold a map of their own, and that map's keys ("policy" -> hidden, rounds...).
  std::vector<std::pair<std::string, std::vector<std::string>>> sections;
};

// Sets `arg`'s value in `root`.  InputError ("command line: unknown config key 'lr_fnal'
// (did you mean 'lr_final'?)") for an unknown key, a malformed argument or value, or a
// section that the file holds as a scalar.
void apply_override(YAML::Node root, const std::string& arg, const ConfigKeys& keys);
void apply_overrides(YAML::Node root, const std::vector<std::string>& args, const ConfigKeys& keys);

}  // namespace placeto
