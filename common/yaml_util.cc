#include "common/yaml_util.h"

#include <cmath>

#include "common/error.h"
#include "common/files.h"

namespace placeto {

YAML::Node parse_yaml_text(const std::string& text, const std::string& source) {
  try {
    return YAML::Load(text);
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
