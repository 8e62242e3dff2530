// Built instead of cmd_policy.cc when LibTorch is not available: the learning commands say
// so clearly instead of being silently absent.
#include "common/error.h"
#include "launch/commands.h"
#include "sim/placers/registry.h"

namespace placeto {

void register_learned_placers() {
  PlacerInfo p;
  p.name = "policy";
  p.summary = "a trained policy (needs a build with LibTorch)";
  p.kind = PlacerKind::kLearned;
  p.needs_checkpoint = true;
  p.make = [](const PlacerOptions&) -> std::unique_ptr<Placer> {
    throw InputError(
        "--method policy needs LibTorch; this build has none (apt install libtorch-dev and "
        "rebuild)");
  };
  register_placer(p);
}

void register_learning_commands(CLI::App&) {}

void register_profile_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("profile", "Time a model's ops (needs a build with LibTorch)");
  cmd->allow_extras();
  cmd->callback([] {
    throw InputError(
        "placeto profile times ops with LibTorch; this build has none (apt install libtorch-dev "
        "and rebuild)");
  });
}

}  // namespace placeto
