// The policy's parameters and gradients as one flat float vector, in the stable order of
// named_parameters_sorted(): what the all-reduce, Adam and checkpoints work on.
#pragma once

#include <torch/torch.h>

#include <vector>

#include "actors/policy.h"
#include "learner/checkpointing.h"

namespace placeto {

size_t count_parameters(PolicyNet& net);
ParamLayout param_layout(PolicyNet& net);
std::vector<float> get_flat_params(PolicyNet& net);
void set_flat_params(PolicyNet& net, const std::vector<float>& flat);
// Gradients (zeros where a parameter has none).
std::vector<float> get_flat_grads(PolicyNet& net);

}  // namespace placeto
