// Training config (learner/train_config.h, torch-free): parse_train_config with overrides.
// Lines of the input that start with "#= " are also passed as overrides ("a.b=value"); to
// YAML they are comments, so one input exercises both.
#include <sstream>
#include <string>
#include <vector>

#include "common/error.h"
#include "learner/train_config.h"
#include "tests/fuzz/fuzz_targets.h"

namespace placeto::fuzz {

void fuzz_train_config(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> overrides;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);)
    if (line.rfind("#= ", 0) == 0) overrides.push_back(line.substr(3));
  try {
    (void)parse_train_config(text, "fuzz.yaml", overrides);
  } catch (const Error&) {
  }
}

}  // namespace placeto::fuzz

PLACETO_FUZZ_ENTRY(fuzz_train_config)
