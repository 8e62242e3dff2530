// Cluster YAML (sim/cluster.h): parse_yaml_text + cluster_from_yaml, as load_cluster does.
#include <string>

#include "common/error.h"
#include "common/yaml_util.h"
#include "sim/cluster_yaml.h"
#include "tests/fuzz/fuzz_targets.h"

namespace placeto::fuzz {

void fuzz_cluster_yaml(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    (void)cluster_from_yaml(YamlField(parse_yaml_text(text, "fuzz.yaml"), "fuzz.yaml", ""));
  } catch (const Error&) {
  }
}

}  // namespace placeto::fuzz

PLACETO_FUZZ_ENTRY(fuzz_cluster_yaml)
