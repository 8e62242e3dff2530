// The subcommands of the `placeto` executable.  Each registers its options on the CLI11 app
// and a callback that does the work; errors are thrown as placeto::Error and reported by
// main() with exit code 2.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace placeto {

void register_sim_command(CLI::App& app);
void register_ckpt_info_command(CLI::App& app);
void register_place_command(CLI::App& app);    // cmd_place.cc
void register_compare_command(CLI::App& app);  // cmd_compare.cc
void register_import_command(CLI::App& app);
// train (cmd_train.cc): whichever trainer the config names.
void register_train_command(CLI::App& app);
// Adds the trainers this build has to the trainer registry (training/trainers.h): the
// scorer's always, the Placeto policy's from libplaceto_policy.so where LibTorch is built
// (trainers.cc beside this file).
void register_trainers();
void register_generate_command(CLI::App& app);
void register_coarsen_command(CLI::App& app);
void register_export_command(CLI::App& app);  // cmd_export.cc
// The commands and placers that need LibTorch (torch_commands.cc): `eval`, `profile`, and the
// placers policy and policy+anneal.  Registered here without LibTorch; a module
// (torch_module.h) is loaded when one of them runs.  main() registers the placers first, so
// that every --help lists them.
void register_learned_placers();
void register_torch_commands(CLI::App& app);

// Summaries shared by the registration above and the modules' own parsers.
inline constexpr const char* kEvalSummary =
    "Place every graph of a directory zero-shot with a Placeto checkpoint, next to every "
    "classical placer, anneal (best-known) and the lower bound";
inline constexpr const char* kProfileSummary =
    "Time every op of an ONNX model here with LibTorch; write the graph with measured costs and "
    "a fitted device profile; print the analytic cost model's error";

// In the modules: the commands' own parsers and work.  `args` is argv after the command's
// name; the result is the exit code (--help and parse errors are handled inside, other errors
// are thrown as in every command).
int run_eval_command(const std::vector<std::string>& args);     // cmd_policy.cc
int run_profile_command(const std::vector<std::string>& args);  // cmd_profile.cc
// Parses `args` with `app` (its callback does the work); app.exit()'s code on --help or a
// parse error, else 0.
inline int parse_command_app(CLI::App& app, const std::vector<std::string>& args) {
  std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 takes them backwards
  try {
    app.parse(reversed);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  return 0;
}

}  // namespace placeto
