// The entry point of libplaceto_profile.so (launch/torch_module.h): `placeto profile`.
#include <stdexcept>

#include "launch/commands.h"
#include "launch/torch_module.h"

extern "C" void placeto_module_profile(placeto::TorchModule* out) {
  out->run_command = [](const std::string& command, const std::vector<std::string>& args) {
    if (command != "profile")
      throw std::logic_error("libplaceto_profile.so has no command " + command);
    return placeto::run_profile_command(args);
  };
}
