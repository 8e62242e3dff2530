// Checks that a loaded checkpoint fits what is about to use it: the model's parameter shapes
// and the run configuration.  Both report every problem at once, in one InputError, so that a
// user fixes a resume in one go.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/checkpoint/checkpoint_file.h"

namespace placeto {

using ShapeMap = std::map<std::string, std::vector<int64_t>>;

// Throws InputError naming `source` and each parameter that the model expects but the
// checkpoint lacks, that the checkpoint has but the model does not, or whose shape differs
// ("enc/w: checkpoint [3, 4], model [4, 4]"); Adam moments present in the checkpoint must
// have their parameter's shape too.
void check_model_shapes(const CheckpointData& data, const ShapeMap& expected,
                        const std::string& source);

// The keys whose values differ between two YAML configurations, flattened as "a.b.c" and
// "a.list[2]", each as "key (checkpoint: X, current: Y)" with "<absent>" for a missing side.
// Scalars compare as text.  A key equal to, or below, one of `ignore_keys` is skipped (e.g.
// "run" skips "run.dir" and "run.seed").
std::vector<std::string> config_differences(const std::string& checkpoint_yaml,
                                            const std::string& current_yaml,
                                            const std::vector<std::string>& ignore_keys);

// Throws InputError naming `source` and every differing key when config_differences is not
// empty.
void check_config_matches(const std::string& checkpoint_yaml, const std::string& current_yaml,
                          const std::vector<std::string>& ignore_keys, const std::string& source);

}  // namespace placeto
