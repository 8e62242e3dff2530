// The entry point of libplaceto_policy.so (launch/torch_module.h): the Placeto trainer, the
// policy's placers and `placeto eval`.
#include <stdexcept>

#include "launch/commands.h"
#include "launch/torch_module.h"
#include "learner/policy_io.h"
#include "learner/training_run.h"

extern "C" void placeto_module_policy(placeto::TorchModule* out) {
  out->trainer = placeto::placeto_trainer_info();
  out->make_placer = placeto::make_policy_placer_by_name;
  out->run_command = [](const std::string& command, const std::vector<std::string>& args) {
    if (command != "eval") throw std::logic_error("libplaceto_policy.so has no command " + command);
    return placeto::run_eval_command(args);
  };
}
