// The Placeto policy's training run in a run directory: the resolved config.yaml, metrics.csv,
// one log per rank, checkpoints (checkpoints/ckpt_N.h5 + LATEST), resume, a progress line with
// rate and ETA, the periodic evaluation (eval.csv, best.h5) and a final one on the test split.
// The run harness (training/run.h) does the parts every trainer shares; `placeto train` and
// `placeto_actor` reach this through the trainer registry (training/trainers.h).
#pragma once

#include "common/comm/comm.h"
#include "training/run.h"
#include "training/trainers.h"

namespace placeto {

// Runs (or resumes) training.  Throws placeto::Error on bad input.
int run_training(const RunOptions& options, Communicator& comm);

// The Placeto trainer ("placeto": every config without a `search_policy` key).  The
// executables take it from libplaceto_policy.so (launch/torch_module.h).
TrainerInfo placeto_trainer_info();

}  // namespace placeto
