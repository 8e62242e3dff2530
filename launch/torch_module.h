// The LibTorch half of a torch build, loaded only when a command needs it: placeto_actor
// starts without LibTorch and loads libplaceto_torch.so (beside bin/, in lib/) when the
// config names the Placeto trainer, so that training the learned search's scorer never maps
// libtorch.  The executable exports its symbols (ENABLE_EXPORTS), so the module shares the
// executable's copies of the libraries both hold (the stop flag, the registries, logging).
#pragma once

#include "training/trainers.h"

namespace placeto {

// The Placeto trainer from the module.  InputError naming the file when it cannot be loaded.
TrainerInfo load_placeto_trainer_module();

}  // namespace placeto

// The module's entry point (torch_module_entry.cc).
extern "C" void placeto_torch_module_trainer(placeto::TrainerInfo* out);
