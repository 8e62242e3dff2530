// The subcommands of the `placeto` executable.  Each registers its options on the CLI11 app
// and a callback that does the work; errors are thrown as placeto::Error and reported by
// main() with exit code 2.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace placeto {

void register_sim_command(CLI::App& app);
void register_ckpt_info_command(CLI::App& app);
void register_place_command(CLI::App& app);    // cmd_place.cc
void register_compare_command(CLI::App& app);  // cmd_compare.cc
void register_import_command(CLI::App& app);
// eval (cmd_policy.cc with LibTorch; nothing without it).
void register_learning_commands(CLI::App& app);
// train (cmd_train.cc): whichever trainer the config names.
void register_train_command(CLI::App& app);
// Adds the trainers this build has to the trainer registry (training/trainers.h): the
// scorer's always, the Placeto policy's with LibTorch (trainers.cc beside this file).
void register_trainers();
// Adds the learned placers (policy, policy+anneal) to the registry; without LibTorch it adds
// a "policy" whose use says that the build has no LibTorch.  main() calls it first.
void register_learned_placers();
void register_generate_command(CLI::App& app);
void register_coarsen_command(CLI::App& app);
void register_export_command(CLI::App& app);  // cmd_export.cc
// placeto profile (cmd_profile.cc with LibTorch; an error saying so without it).
void register_profile_command(CLI::App& app);

}  // namespace placeto
