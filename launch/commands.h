// The subcommands of the `placeto` executable.  Each registers its options on the CLI11 app
// and a callback that does the work; errors are thrown as placeto::Error and reported by
// main() with exit code 2.
#pragma once

#include <CLI/CLI.hpp>

namespace placeto {

void register_sim_command(CLI::App& app);
void register_generate_command(CLI::App& app);
void register_coarsen_command(CLI::App& app);

}  // namespace placeto
