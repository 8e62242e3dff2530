// `placeto`: the command-line entry point for simulation, placement, comparison, family
// generation and import.  Distributed training is `placeto_actor` (under mpirun).  It never
// links LibTorch: the commands that need it load a module (launch/torch_module.h).
#include <spdlog/spdlog.h>

#include <iostream>

#include "common/error.h"
#include "common/logging.h"
#include "improve/search_placers.h"
#include "launch/commands.h"
#include "placeto/config.h"

int main(int argc, char** argv) {
  CLI::App app{"placeto: learned and classical device placement (version " PLACETO_VERSION
               ", " PLACETO_GIT_REVISION ")"};
  app.require_subcommand(1);
  app.set_version_flag("--version", PLACETO_VERSION " (" PLACETO_GIT_REVISION ")");
  app.add_option_function<std::string>(
         "--log-level",
         [](const std::string& level) { spdlog::set_level(spdlog::level::from_str(level)); },
         "Messages shown: trace, debug, info (default), warn, error (before the subcommand; "
         "placeto train takes log_level from its config)")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error"}));
  placeto::register_learned_placers();  // before the commands: their --help lists them
  placeto::register_learned_search_placers();
  placeto::register_trainers();
  placeto::register_sim_command(app);
  placeto::register_ckpt_info_command(app);
  placeto::register_place_command(app);
  placeto::register_compare_command(app);
  placeto::register_import_command(app);
  placeto::register_train_command(app);
  placeto::register_generate_command(app);
  placeto::register_coarsen_command(app);
  placeto::register_export_command(app);
  placeto::register_torch_commands(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const placeto::Error& e) {
    std::cerr << "placeto: error: " << e.what() << std::endl;
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "placeto: internal error: " << e.what() << std::endl;
    return 3;
  }
  return 0;
}
