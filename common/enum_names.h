// Typed configuration values: each enum has one table of (value, name), from which it is
// parsed once -- with an error naming the key and the allowed names -- and written back.
// Nothing deeper in the code compares configuration strings.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

namespace placeto {

template <typename E>
struct EnumName {
  E value;
  const char* name;
};

template <typename E, size_t N>
std::optional<E> parse_enum(const std::string& s, const EnumName<E> (&table)[N]) {
  for (const auto& e : table)
    if (s == e.name) return e.value;
  return std::nullopt;
}

template <typename E, size_t N>
const char* enum_name(E value, const EnumName<E> (&table)[N]) {
  for (const auto& e : table)
    if (e.value == value) return e.name;
  return "?";
}

// "a, b, c": for error messages and help texts.
template <typename E, size_t N>
std::string enum_choices(const EnumName<E> (&table)[N]) {
  std::string out;
  for (const auto& e : table) out += (out.empty() ? "" : ", ") + std::string(e.name);
  return out;
}

}  // namespace placeto
