// The commands and placers that need LibTorch, registered without it (commands.h): each
// forwards to a module (torch_module.h) that is loaded only when it runs, so that every other
// command starts without LibTorch.  In a build without LibTorch they say so.
#include <memory>
#include <string>
#include <utility>

#include "common/error.h"
#include "launch/commands.h"
#include "launch/torch_module.h"
#include "learner/policy_catalog.h"
#include "sim/placers/registry.h"

namespace placeto {

void register_learned_placers() {
  if (find_placer("policy")) return;
  for (PlacerInfo info : policy_placer_catalog()) {
    const std::string name = info.name;
    info.make = [name](const PlacerOptions& o) -> std::unique_ptr<Placer> {
      const TorchModule& m = torch_module(kPolicyModule);
      return m.make_placer(name, o);
    };
    register_placer(std::move(info));
  }
}

namespace {

// A subcommand that hands its arguments, --help included, to the module's parser.
void add_module_command(CLI::App& app, const std::string& name, const char* summary,
                        const std::string& module) {
  CLI::App* cmd = app.add_subcommand(name, summary);
  cmd->set_help_flag();  // the module's parser answers --help
  cmd->prefix_command();
  cmd->allow_extras();
  cmd->callback([cmd, name, module] {
    const int rc = torch_module(module).run_command(name, cmd->remaining());
    if (rc != 0) throw CLI::RuntimeError(rc);  // main() exits with it, saying nothing more
  });
}

}  // namespace

void register_torch_commands(CLI::App& app) {
  add_module_command(app, "eval", kEvalSummary, kPolicyModule);
  add_module_command(app, "profile", kProfileSummary, kProfileModule);
}

}  // namespace placeto
