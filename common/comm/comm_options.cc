#include "common/comm/comm_options.h"

#include <cmath>

#include "common/comm/backend_choice.h"
#include "common/error.h"

namespace placeto {
namespace {

void check_backend(const YamlField& field, const std::string& name) {
  const std::string problem = backend_name_problem(name);
  if (!problem.empty()) field.fail(problem);
}

}  // namespace

CommOptions read_comm_options(const YamlField& field) {
  CommOptions options;
  if (!field.defined()) return options;
  if (!field.is_map()) {
    options.backend = field.as_string();
    check_backend(field, options.backend);
    return options;
  }
  field.check_keys({"backend", "deterministic", "timeout_s"});
  field.get("backend", &options.backend);
  if (field.has("backend")) check_backend(field.at("backend"), options.backend);
  field.get("deterministic", &options.deterministic);
  field.get("timeout_s", &options.timeout_s);
  if (!std::isfinite(options.timeout_s) || options.timeout_s < 0) {
    field.at("timeout_s")
        .fail("must be a number of seconds >= 0 (0 = no timeout), got " +
              std::to_string(options.timeout_s));
  }
  return options;
}

YAML::Node comm_options_to_yaml(const CommOptions& options) {
  YAML::Node node;
  node["backend"] = options.backend;
  node["deterministic"] = options.deterministic;
  node["timeout_s"] = options.timeout_s;
  return node;
}

}  // namespace placeto
