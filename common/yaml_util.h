// Reading YAML configuration files into plain structs, with errors that name the file, the
// key path and the value, and "did you mean" for unknown keys.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <string>
#include <vector>

namespace placeto {

// Limits on what a configuration file may be: nesting depth, and values counted with aliases
// expanded.
constexpr int kMaxYamlDepth = 64;
constexpr size_t kMaxYamlNodes = 1000000;

// Parses a YAML file; unreadable, malformed, too deeply nested or alias-bomb files throw
// InputError naming the file (and the line where there is one).
YAML::Node load_yaml_file(const std::string& path);
YAML::Node parse_yaml_text(const std::string& text, const std::string& source);

// A YAML node plus where it came from.
class YamlField {
 public:
  // A missing key (yaml-cpp's "invalid" node) becomes an undefined node that is safe to query.
  YamlField(YAML::Node node, std::string file, std::string path)
      : node_(node.IsDefined() ? std::move(node) : YAML::Node(YAML::NodeType::Undefined)),
        file_(std::move(file)),
        path_(std::move(path)) {}

  const YAML::Node& node() const { return node_; }
  const std::string& file() const { return file_; }
  const std::string& path() const { return path_; }
  bool defined() const { return node_.IsDefined() && !node_.IsNull(); }
  bool has(const std::string& key) const;
  YamlField at(const std::string& key) const;  // may be undefined
  YamlField at(size_t index) const;
  size_t size() const { return node_.size(); }
  bool is_sequence() const { return node_.IsSequence(); }
  bool is_map() const { return node_.IsMap(); }

  // Rejects keys not in `known`, suggesting the closest one.
  void check_keys(const std::vector<std::string>& known) const;

  std::string as_string() const;
  double as_double() const;
  int64_t as_int() const;
  bool as_bool() const;

  // Reads into `out` when the key is present; leaves the default otherwise.
  void get(const std::string& key, std::string* out) const;
  void get(const std::string& key, double* out) const;
  void get(const std::string& key, int* out) const;
  void get(const std::string& key, int64_t* out) const;
  void get(const std::string& key, bool* out) const;

  [[noreturn]] void fail(const std::string& message) const;

 private:
  YAML::Node node_;
  std::string file_;
  std::string path_;
};

}  // namespace placeto
