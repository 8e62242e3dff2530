// The one entry point of training: a config file names its trainer by its top-level key, and
// `placeto train` (one process) and `placeto_actor` (MPI) run whichever it names.  Trainers
// register here at start-up:
//   - "scorer"  (key `search_policy`): the learned search's move scorer, improve/scorer_training.h;
//     torch-free, registered in every build;
//   - "placeto" (any other config): the Placeto policy, learner/training_run.h; registered only
//     in builds with LibTorch.
// Choosing reads the YAML only; nothing of a trainer is loaded before it is chosen.
#pragma once

#include <functional>
#include <string>

#include "common/comm/comm.h"
#include "training/run.h"

namespace placeto {

struct TrainerInfo {
  std::string name;
  // A config whose top-level map has this key is this trainer's; "" = every config that no
  // other trainer claims.
  std::string top_key;
  // The communicator the config asks for (backend, collective timeout), read before it exists.
  std::function<CommOptions(const RunOptions&)> comm_options;
  // Runs (or resumes) the training; kExitDone or kExitRequeue.  Throws placeto::Error.
  std::function<int(const RunOptions&, Communicator&)> run;
};

// Adds a trainer; a second registration of the same name is ignored.
void register_trainer(TrainerInfo info);

// The trainer that `config_path` selects.  InputError naming the file when it cannot be read,
// is not a YAML map, or names a trainer this build does not have (the Placeto trainer in a
// build without LibTorch).
const TrainerInfo& trainer_for_config(const std::string& config_path);

}  // namespace placeto
