#include "common/error.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace placeto {

std::string format_location(const std::string& file, const std::string& field,
                            const std::string& message) {
  std::string out;
  if (!file.empty()) out += file + ": ";
  if (!field.empty()) out += field + ": ";
  out += message;
  return out;
}

void throw_input_error(const std::string& file, const std::string& field,
                       const std::string& message) {
  throw InputError(format_location(file, field, message));
}

namespace {
std::string escape_name(const std::string& name, bool escape_double_quote) {
  constexpr size_t kMaxBytes = 80;
  std::string out;
  size_t n = name.size();
  bool cut = false;
  if (n > kMaxBytes) {
    n = kMaxBytes;
    while (n > 0 && (static_cast<unsigned char>(name[n]) & 0xC0) == 0x80) --n;  // UTF-8 boundary
    cut = true;
  }
  for (size_t i = 0; i < n; ++i) {
    const unsigned char c = static_cast<unsigned char>(name[i]);
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\\') {
      out += "\\\\";
    } else if (c == '"' && escape_double_quote) {
      out += "\\\"";
    } else if (c < 0x20 || c == 0x7F) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02X", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  if (cut) out += "...";
  return out;
}
}  // namespace

std::string printable_name(const std::string& name) { return escape_name(name, false); }

std::string quoted_name(const std::string& name) { return "\"" + escape_name(name, true) + "\""; }

namespace {
size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}
}  // namespace

std::string did_you_mean_any(const std::string& word, const std::string* options, size_t count) {
  size_t best = std::max<size_t>(2, word.size() / 3) + 1;
  std::string best_word;
  for (size_t i = 0; i < count; ++i) {
    size_t d = edit_distance(word, options[i]);
    if (d < best) {
      best = d;
      best_word = options[i];
    }
  }
  return best_word;
}

std::string did_you_mean(const std::string& word,
                         const std::initializer_list<std::string>& options) {
  return did_you_mean_any(word, options.begin(), options.size());
}

namespace detail {
void check_failed(const char* file, int line, const std::string& message) {
  std::fprintf(stderr, "%s:%d: internal error: %s\n", file, line, message.c_str());
  std::fflush(stderr);
  std::abort();
}
}  // namespace detail

}  // namespace placeto
