#include "common/yaml_util.h"

#include <cmath>
#include <utility>
#include <vector>

#include "common/error.h"
#include "common/files.h"

namespace placeto {

namespace {
// yaml-cpp recurses once per level of nesting (it stops at 2000, deeper than a stack under
// the sanitizers can take); our files nest a few levels.  Flow collections ("[[[[...") are
// counted here, outside quotes and comments; block nesting is counted on the parsed tree.
void check_yaml_flow_depth(const std::string& text, const std::string& source) {
  int depth = 0;
  size_t line = 1;
  char quote = 0;
  bool comment = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char ch = text[i];
    if (ch == '\n') {
      ++line;
      comment = false;
      continue;
    }
    if (comment) continue;
    if (quote) {
      if (quote == '"' && ch == '\\')
        ++i;
      else if (ch == quote)
        quote = 0;
      continue;
    }
    if (ch == '#' && (i == 0 || text[i - 1] == ' ' || text[i - 1] == '\t'))
      comment = true;
    else if (ch == '"' || ch == '\'')
      quote = ch;
    else if (ch == '[' || ch == '{') {
      if (++depth > kMaxYamlDepth)
        throw InputError(source + ": not accepted: collections nest deeper than " +
                         std::to_string(kMaxYamlDepth) + " levels (line " + std::to_string(line) +
                         ")");
    } else if ((ch == ']' || ch == '}') && depth > 0) {
      --depth;
    }
  }
}

// Iterative, so that it cannot itself overflow; aliases are followed at most kMaxYamlNodes
// times in all, which stops an alias bomb (each level referring to the one below many times).
void check_yaml_tree(const YAML::Node& root, const std::string& source) {
  std::vector<std::pair<YAML::Node, int>> stack{{root, 0}};
  size_t visited = 0;
  while (!stack.empty()) {
    auto [node, depth] = stack.back();
    stack.pop_back();
    if (++visited > kMaxYamlNodes)
      throw InputError(source + ": not accepted: more than " + std::to_string(kMaxYamlNodes) +
                       " values once aliases are expanded (an alias bomb?)");
    if (depth > kMaxYamlDepth)
      throw InputError(source + ": not accepted: collections nest deeper than " +
                       std::to_string(kMaxYamlDepth) + " levels (line " +
                       std::to_string(node.Mark().line + 1) + ")");
    if (node.IsSequence()) {
      for (const auto& child : node) stack.emplace_back(child, depth + 1);
    } else if (node.IsMap()) {
      for (const auto& kv : node) {
        stack.emplace_back(kv.first, depth + 1);
        stack.emplace_back(kv.second, depth + 1);
      }
    }
  }
}
}  // namespace

YAML::Node parse_yaml_text(const std::string& text, const std::string& source) {
  check_yaml_flow_depth(text, source);
  try {
    YAML::Node root = YAML::Load(text);
    check_yaml_tree(root, source);
    return root;
  } catch (const YAML::Exception& e) {
    throw InputError(source + ": not valid YAML (line " + std::to_string(e.mark.line + 1) +
                     ", column " + std::to_string(e.mark.column + 1) + ": " + e.msg + ")");
  }
}

YAML::Node load_yaml_file(const std::string& path) {
  return parse_yaml_text(read_file(path), path);
}

void YamlField::fail(const std::string& message) const {
  throw_input_error(file_, path_.empty() ? "(document)" : path_, message);
}

bool YamlField::has(const std::string& key) const {
  return node_.IsMap() && node_[key].IsDefined() && !node_[key].IsNull();
}

YamlField YamlField::at(const std::string& key) const {
  std::string child = path_.empty() ? key : path_ + "." + key;
  if (!node_.IsMap()) {
    if (!node_.IsDefined() || node_.IsNull()) return YamlField(YAML::Node(), file_, child);
    fail("expected a mapping");
  }
  // A missing key yields yaml-cpp's "zombie" node, on which every query but IsDefined()
  // throws InvalidNode; hand out a plain undefined node instead.
  YAML::Node value = node_[key];
  if (!value.IsDefined()) return YamlField(YAML::Node(), file_, child);
  return YamlField(value, file_, child);
}

YamlField YamlField::at(size_t index) const {
  return YamlField(node_[index], file_, path_ + "[" + std::to_string(index) + "]");
}

void YamlField::check_keys(const std::vector<std::string>& known) const {
  if (!defined()) return;
  if (!node_.IsMap()) fail("expected a mapping of keys to values");
  for (auto it = node_.begin(); it != node_.end(); ++it) {
    // A complex key ("? [a, b]: 1") is valid YAML but no key of ours; as<std::string>()
    // would throw yaml-cpp's BadConversion.
    if (!it->first.IsScalar()) fail("expected plain string keys, got a non-scalar key");
    const std::string key = it->first.Scalar();
    bool ok = false;
    for (const auto& k : known) ok = ok || (k == key);
    if (!ok) {
      std::string hint = did_you_mean_any(key, known.data(), known.size());
      std::string field = path_.empty() ? key : path_ + "." + key;
      throw_input_error(file_, field,
                        "unknown key" + (hint.empty() ? "" : " (did you mean '" + hint + "'?)"));
    }
  }
}

std::string YamlField::as_string() const {
  if (!node_.IsScalar()) fail("expected a string");
  return node_.Scalar();
}

double YamlField::as_double() const {
  if (!node_.IsScalar()) fail("expected a number");
  const std::string& s = node_.Scalar();
  char* end = nullptr;
  double d = std::strtod(s.c_str(), &end);
  if (s.empty() || end != s.c_str() + s.size() || !std::isfinite(d))
    fail("expected a finite number, got '" + s + "'");
  return d;
}

int64_t YamlField::as_int() const {
  if (!node_.IsScalar()) fail("expected an integer");
  const std::string& s = node_.Scalar();
  char* end = nullptr;
  long long v = std::strtoll(s.c_str(), &end, 10);
  if (s.empty() || end != s.c_str() + s.size()) {
    double d = std::strtod(s.c_str(), &end);  // accept 1e6
    if (end == s.c_str() + s.size() && std::isfinite(d) && d == std::floor(d) &&
        std::fabs(d) < 9e18)
      return static_cast<int64_t>(d);
    fail("expected an integer, got '" + s + "'");
  }
  return v;
}

bool YamlField::as_bool() const {
  if (!node_.IsScalar()) fail("expected true or false");
  const std::string& s = node_.Scalar();
  if (s == "true" || s == "True" || s == "yes" || s == "on" || s == "1") return true;
  if (s == "false" || s == "False" || s == "no" || s == "off" || s == "0") return false;
  fail("expected true or false, got '" + s + "'");
}

void YamlField::get(const std::string& key, std::string* out) const {
  if (has(key)) *out = at(key).as_string();
}
void YamlField::get(const std::string& key, double* out) const {
  if (has(key)) *out = at(key).as_double();
}
void YamlField::get(const std::string& key, int* out) const {
  if (!has(key)) return;
  int64_t v = at(key).as_int();
  if (v < INT32_MIN || v > INT32_MAX) at(key).fail("value out of range: " + std::to_string(v));
  *out = static_cast<int>(v);
}
void YamlField::get(const std::string& key, int64_t* out) const {
  if (has(key)) *out = at(key).as_int();
}
void YamlField::get(const std::string& key, bool* out) const {
  if (has(key)) *out = at(key).as_bool();
}

}  // namespace placeto
