// placeto_actor: the distributed trainer.  Every MPI rank is an actor (episodes + gradients);
// rank 0 is also the learner's bookkeeper (metrics, checkpoints).  Run it as
//   mpirun -np 64 placeto_actor --config experiments/configs/ptb.yaml --run-dir runs/ptb
//       [--resume auto] [key=value ...]
// or directly as one process.  The config names the trainer (training/trainers.h): the
// Placeto policy, or with the top-level key search_policy the learned search's scorer.
// Exit codes: 0 done, 2 bad input, 3 internal error, 75 stopped by SIGTERM/SIGUSR1 after a
// checkpoint (run again with --resume auto).
#include <signal.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <iostream>

#include "common/comm/factory.h"
#include "common/error.h"
#include "launch/commands.h"
#include "placeto/config.h"
#include "training/trainers.h"

namespace {

void on_stop_signal(int) {
  // First signal: stop at the next iteration boundary (after a checkpoint).  Second: leave now.
  if (placeto::stop_signal_flag().fetch_add(1) >= 1) _exit(placeto::kExitRequeue);
}

}  // namespace

int main(int argc, char** argv) {
  placeto::MpiRuntime* mpi_ptr = nullptr;
  try {
    placeto::MpiRuntime mpi(&argc, &argv);
    mpi_ptr = &mpi;
    CLI::App app{"placeto_actor: distributed Placeto training (version " PLACETO_VERSION ")"};
    placeto::RunOptions opts;
    app.add_option("--config", opts.config_path, "Training config (YAML)")->required();
    app.add_option("--run-dir", opts.run_dir, "Run directory")->required();
    app.add_option("--resume", opts.resume, "none, auto (from LATEST) or a checkpoint path");
    app.add_option("overrides", opts.overrides, "Config overrides key=value");
    try {
      app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
      return mpi.world_rank() == 0 ? app.exit(e) : (e.get_exit_code() ? 2 : 0);
    }
    struct sigaction sa {};
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, nullptr);
    sigaction(SIGUSR1, &sa, nullptr);
    placeto::register_trainers();
    const placeto::TrainerInfo& trainer = placeto::trainer_for_config(opts.config_path);
    auto comm = placeto::make_communicator(trainer.comm_options(opts), mpi);
    int rc;
    try {
      placeto::read_run_environment(&opts);
      rc = trainer.run(opts, *comm);
    } catch (const placeto::Error& e) {
      std::cerr << "placeto_actor: rank " << comm->rank() << ": error: " << e.what() << std::endl;
      if (comm->size() > 1) comm->abort(2, e.what());
      return 2;
    }
    return rc;
  } catch (const placeto::Error& e) {
    std::cerr << "placeto_actor: rank " << (mpi_ptr ? mpi_ptr->world_rank() : 0)
              << ": error: " << e.what() << std::endl;
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "placeto_actor: internal error: " << e.what() << std::endl;
    return 3;
  }
}
