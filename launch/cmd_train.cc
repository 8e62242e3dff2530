// placeto train: single-process training (the same run directory, checkpoints and code path
// as the MPI trainer placeto_actor, with one rank).
#include <torch/torch.h>

#include <memory>

#include "launch/commands.h"
#include "learner/collective.h"
#include "learner/training_run.h"

namespace placeto {

void register_train_command(CLI::App& app) {
  auto opts = std::make_shared<RunOptions>();
  CLI::App* cmd = app.add_subcommand("train", "Train a policy in one process (see placeto_actor)");
  cmd->add_option("--config", opts->config_path, "Training config (YAML)")->required();
  cmd->add_option("--run-dir", opts->run_dir, "Run directory")->required();
  cmd->add_option("--resume", opts->resume, "none, auto (from LATEST) or a checkpoint path");
  cmd->add_option("overrides", opts->overrides, "Config overrides key=value");
  cmd->callback([opts] {
    torch::set_num_threads(1);
    LocalCollective coll;
    int rc = run_training(*opts, coll);
    if (rc != kExitDone) throw CLI::RuntimeError(rc);
  });
}

}  // namespace placeto
