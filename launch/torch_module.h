// The LibTorch half of a torch build, in modules loaded only when a command needs them, so
// that `placeto` and `placeto_actor` start without LibTorch (docs/ARCHITECTURE.md):
//
//   lib/libplaceto_policy.so   the Placeto policy: its trainer, its placers (policy,
//                              policy+anneal) and `placeto eval`
//   lib/libplaceto_profile.so  `placeto profile` (times ops with LibTorch)
//
// A module is found beside the executable's bin/ (in ../lib/).  The executables export their
// symbols (ENABLE_EXPORTS), so a module shares the executable's copies of the libraries both
// hold (the stop flag, the registries, logging).  Each module has one C entry point that fills
// a TorchModule; what a module does not provide stays empty.
//
// Threading: load from the main thread, before any other thread places.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "sim/placers/placer.h"
#include "training/trainers.h"

namespace placeto {

struct TorchModule {
  std::string path;  // the file loaded
  // The Placeto trainer (libplaceto_policy.so).
  TrainerInfo trainer;
  // Builds a placer of the module by name (libplaceto_policy.so).
  std::function<std::unique_ptr<Placer>(const std::string& name, const PlacerOptions&)> make_placer;
  // Runs a command ("eval", "profile") on its arguments (argv after the command's name);
  // returns the exit code.  Parse errors and --help are handled inside.
  std::function<int(const std::string& command, const std::vector<std::string>& args)> run_command;
};

// The modules.
inline constexpr const char* kPolicyModule = "policy";
inline constexpr const char* kProfileModule = "profile";

// Loads lib/libplaceto_<name>.so once and returns what its entry point filled in.  InputError
// naming the file when it cannot be loaded, or saying that the build has no LibTorch.
const TorchModule& torch_module(const std::string& name);

}  // namespace placeto

// The entry point of each module: placeto_module_<name>.
extern "C" void placeto_module_policy(placeto::TorchModule* out);
extern "C" void placeto_module_profile(placeto::TorchModule* out);
