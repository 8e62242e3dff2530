// Reading JSON documents written by users and tools, with errors that name the file and the
// field path (e.g. "g.json: nodes[3].cost_us: expected a number, got \"ten\"").
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

namespace placeto {

using Json = nlohmann::json;

// Deeper nesting is refused before parsing (the parser and the code that walks a document
// recurse once per level).
constexpr int kMaxJsonDepth = 64;

// Parses a file; a missing, unreadable, non-JSON, truncated or too deeply nested file throws
// InputError.
Json parse_json_file(const std::string& path);
Json parse_json_text(const std::string& text, const std::string& source_name);

// A JSON value together with where it came from, for error messages.
class JsonField {
 public:
  JsonField(const Json& value, std::string file, std::string path)
      : value_(&value), file_(std::move(file)), path_(std::move(path)) {}

  const Json& value() const { return *value_; }
  const std::string& file() const { return file_; }
  const std::string& path() const { return path_; }

  bool has(const char* key) const;
  JsonField at(const char* key) const;  // throws when missing
  JsonField at(size_t index) const;
  // The same value, its path labelled with a user-facing name: nodes[3] "conv1".
  JsonField named(const std::string& name) const;
  size_t size() const;

  void expect_object() const;
  void expect_array() const;
  std::string as_string() const;
  double as_finite_number() const;  // rejects NaN/inf and non-numbers
  double as_nonnegative_number() const;
  int64_t as_int() const;  // integral numbers only
  int64_t as_nonnegative_int() const;

  [[noreturn]] void fail(const std::string& message) const;

 private:
  const Json* value_;
  std::string file_;
  std::string path_;
};

std::string json_type_and_value(const Json& v);

}  // namespace placeto
