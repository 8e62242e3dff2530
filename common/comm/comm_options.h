// Reading and writing the `comm` section of a run configuration into CommOptions (comm.h).
// Two spellings are accepted:
//   comm: auto                       # just the backend: auto | mpi | nccl
//   comm:
//     backend: nccl                  # default auto
//     deterministic: true            # default true: fixed rank-order sums (comm.h)
//     timeout_s: 600                 # default 0 = wait forever; > 0 aborts a stuck job
// Errors name the file, the key and the value (InputError), with "did you mean".
//
// Threading: pure functions.
#pragma once

#include <yaml-cpp/yaml.h>

#include "common/comm/comm.h"
#include "common/yaml_util.h"

namespace placeto {

// An undefined field gives the defaults.
CommOptions read_comm_options(const YamlField& field);

// The map form, every field written (for the run directory's copy of the config).
YAML::Node comm_options_to_yaml(const CommOptions& options);

}  // namespace placeto
