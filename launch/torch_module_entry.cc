// The entry point of libplaceto_torch.so (launch/torch_module.h).
#include "launch/torch_module.h"
#include "learner/training_run.h"

extern "C" void placeto_torch_module_trainer(placeto::TrainerInfo* out) {
  *out = placeto::placeto_trainer_info();
}
