#include "common/json_util.h"

#include <cmath>

#include "common/error.h"
#include "common/files.h"

namespace placeto {

namespace {
// nlohmann's DOM and the code that walks it recurse once per level: a file of 200,000 nested
// '[' would overflow the stack.  No format of ours nests deeper than a few levels.
void check_json_depth(const std::string& text, const std::string& source_name) {
  int depth = 0;
  size_t line = 1;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char ch = text[i];
    if (in_string) {
      if (ch == '\\')
        ++i;
      else if (ch == '"')
        in_string = false;
      continue;
    }
    if (ch == '"')
      in_string = true;
    else if (ch == '\n')
      ++line;
    else if (ch == '[' || ch == '{') {
      if (++depth > kMaxJsonDepth)
        throw InputError(source_name + ": not accepted: arrays and objects nest deeper than " +
                         std::to_string(kMaxJsonDepth) + " levels (line " + std::to_string(line) +
                         ")");
    } else if (ch == ']' || ch == '}') {
      --depth;
    }
  }
}
}  // namespace

Json parse_json_text(const std::string& text, const std::string& source_name) {
  check_json_depth(text, source_name);
  try {
    return Json::parse(text);
  } catch (const Json::exception& e) {  // parse_error, or out_of_range for 1e999
    std::string what = e.what();
    // nlohmann prefixes "[json.exception.parse_error.101] "; keep the useful part.
    auto pos = what.find("] ");
    if (pos != std::string::npos) what = what.substr(pos + 2);
    throw InputError(source_name + ": not valid JSON (" + what + ")");
  }
}

Json parse_json_file(const std::string& path) { return parse_json_text(read_file(path), path); }

std::string json_type_and_value(const Json& v) {
  std::string dumped = v.dump();
  if (dumped.size() > 60) dumped = dumped.substr(0, 57) + "...";
  return std::string(v.type_name()) + " " + dumped;
}

void JsonField::fail(const std::string& message) const {
  throw_input_error(file_, path_.empty() ? "(document)" : path_, message);
}

bool JsonField::has(const char* key) const {
  return value_->is_object() && value_->find(key) != value_->end();
}

JsonField JsonField::at(const char* key) const {
  expect_object();
  auto it = value_->find(key);
  std::string child = path_.empty() ? key : path_ + "." + key;
  if (it == value_->end()) throw_input_error(file_, child, "required field is missing");
  return JsonField(*it, file_, child);
}

JsonField JsonField::at(size_t index) const {
  expect_array();
  return JsonField((*value_)[index], file_, path_ + "[" + std::to_string(index) + "]");
}

JsonField JsonField::named(const std::string& name) const {
  return JsonField(*value_, file_, path_ + " " + quoted_name(name));
}

size_t JsonField::size() const { return value_->size(); }

void JsonField::expect_object() const {
  if (!value_->is_object()) fail("expected an object, got " + json_type_and_value(*value_));
}

void JsonField::expect_array() const {
  if (!value_->is_array()) fail("expected an array, got " + json_type_and_value(*value_));
}

std::string JsonField::as_string() const {
  if (!value_->is_string()) fail("expected a string, got " + json_type_and_value(*value_));
  return value_->get<std::string>();
}

double JsonField::as_finite_number() const {
  if (!value_->is_number()) fail("expected a number, got " + json_type_and_value(*value_));
  double d = value_->get<double>();
  if (!std::isfinite(d)) fail("expected a finite number, got " + value_->dump());
  return d;
}

double JsonField::as_nonnegative_number() const {
  double d = as_finite_number();
  if (d < 0) fail("must be >= 0, got " + value_->dump());
  return d;
}

int64_t JsonField::as_int() const {
  if (value_->is_number_integer()) return value_->get<int64_t>();
  if (value_->is_number_float()) {
    double d = value_->get<double>();
    if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9.0e15)
      return static_cast<int64_t>(d);
  }
  fail("expected an integer, got " + json_type_and_value(*value_));
}

int64_t JsonField::as_nonnegative_int() const {
  int64_t v = as_int();
  if (v < 0) fail("must be >= 0, got " + std::to_string(v));
  return v;
}

}  // namespace placeto
