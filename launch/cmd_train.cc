// `placeto train`: one-process training of whichever trainer the config names (the trainer
// registry, training/trainers.h): the learned search's scorer in every build, the Placeto
// policy where LibTorch is built in.  The MPI version of the same is placeto_actor.
#include <memory>

#include "common/comm/inproc/inproc_communicator.h"
#include "launch/commands.h"
#include "training/trainers.h"

namespace placeto {

void register_train_command(CLI::App& app) {
  auto opts = std::make_shared<RunOptions>();
  CLI::App* train = app.add_subcommand(
      "train", "Train a policy or a learned-search scorer in one process (MPI: placeto_actor)");
  train->add_option("--config", opts->config_path, "Training config (YAML)")->required();
  train->add_option("--run-dir", opts->run_dir, "Run directory")->required();
  train->add_option("--resume", opts->resume, "none, auto (from LATEST) or a checkpoint path");
  train->add_option("overrides", opts->overrides, "Config overrides key=value");
  train->callback([opts] {
    read_run_environment(opts.get());
    const TrainerInfo& trainer = trainer_for_config(opts->config_path);
    std::unique_ptr<Communicator> comm = make_single_rank_communicator();
    const int rc = trainer.run(*opts, *comm);
    if (rc != kExitDone) throw CLI::RuntimeError(rc);
  });
}

}  // namespace placeto
