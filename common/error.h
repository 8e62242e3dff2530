// Errors in Placeto: one typed exception family plus always-on invariant checks.
//
// Policy (one per layer):
//  * Anything a user or another tool can get wrong -- files, fields, values, MPI/HDF5/NCCL
//    return codes -- throws placeto::Error (or a subclass) whose message names the file, the
//    field and the offending value.  Executables catch it at the top, print it and exit 2.
//  * Programming errors (broken invariants) use PLACETO_CHECK*, which are active in every
//    build type, print both sides and abort.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>

namespace placeto {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what) : std::runtime_error(what) {}
};

// Bad input: a file, field or value supplied by a user or a tool.
class InputError : public Error {
 public:
  using Error::Error;
};

// The operating system, a library (HDF5, MPI, NCCL) or the file system failed.
class SystemError : public Error {
 public:
  using Error::Error;
};

// Builds "<file>: <field>: <message>" with the empty parts left out.
std::string format_location(const std::string& file, const std::string& field,
                            const std::string& message);

[[noreturn]] void throw_input_error(const std::string& file, const std::string& field,
                                    const std::string& message);

// A user-supplied name made safe for a one-line message: control characters become \n, \t or
// \xNN, a backslash becomes \\, and names over 80 bytes are cut (at a UTF-8 boundary) with
// "...".  Other bytes, non-ASCII letters included, are kept.
std::string printable_name(const std::string& name);
// The same in double quotes, with '"' escaped: nodes[3] "enc/\"x\"".cost_us.
std::string quoted_name(const std::string& name);

// Returns the candidate closest to `word` (edit distance <= max(2, |word|/3)) or "".
std::string did_you_mean(const std::string& word,
                         const std::initializer_list<std::string>& options);
std::string did_you_mean_any(const std::string& word, const std::string* options, size_t count);

namespace detail {
[[noreturn]] void check_failed(const char* file, int line, const std::string& message);

template <typename A, typename B>
std::string describe_pair(const char* expr, const A& a, const B& b) {
  std::ostringstream os;
  os << expr << " (" << a << " vs " << b << ")";
  return os.str();
}
}  // namespace detail

}  // namespace placeto

#define PLACETO_CHECK(cond)                                                           \
  do {                                                                                \
    if (!(cond)) ::placeto::detail::check_failed(__FILE__, __LINE__, "CHECK " #cond); \
  } while (0)

#define PLACETO_CHECK_OP(a, op, b)                                                               \
  do {                                                                                           \
    const auto& placeto_a_ = (a);                                                                \
    const auto& placeto_b_ = (b);                                                                \
    if (!(placeto_a_ op placeto_b_))                                                             \
      ::placeto::detail::check_failed(                                                           \
          __FILE__, __LINE__,                                                                    \
          ::placeto::detail::describe_pair("CHECK " #a " " #op " " #b, placeto_a_, placeto_b_)); \
  } while (0)

#define PLACETO_CHECK_EQ(a, b) PLACETO_CHECK_OP(a, ==, b)
#define PLACETO_CHECK_NE(a, b) PLACETO_CHECK_OP(a, !=, b)
#define PLACETO_CHECK_LT(a, b) PLACETO_CHECK_OP(a, <, b)
#define PLACETO_CHECK_LE(a, b) PLACETO_CHECK_OP(a, <=, b)
#define PLACETO_CHECK_GT(a, b) PLACETO_CHECK_OP(a, >, b)
#define PLACETO_CHECK_GE(a, b) PLACETO_CHECK_OP(a, >=, b)
