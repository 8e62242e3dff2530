// Parsing a cluster description from YAML (docs/FORMATS.md); load_cluster() in cluster.h is
// the usual entry point.  Kept apart so that cluster.h does not expose yaml-cpp.
#pragma once

#include "common/yaml_util.h"
#include "sim/cluster.h"

namespace placeto {

// Unknown keys, wrong types and out-of-range values throw InputError naming the source and key.
Cluster cluster_from_yaml(const YamlField& root);

}  // namespace placeto
