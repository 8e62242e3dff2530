// Training the learned search's move scorer (improve/move_scorer.h) on every rank of a
// Communicator, in three parts:
//   1. labelling (improve/labelling.h): each rank walks its share of the (graph, cluster,
//      start) jobs with the best-move teacher and records the labelled states;
//   2. imitation: `epochs` epochs of the listwise loss on those states, gradients summed with
//      all_reduce, the same Adam step on every rank;
//   3. RL (improve/scorer_rl.h): `rl_epochs` more epochs of REINFORCE with the incumbent
//      reward from the imitated scorer, with a fresh optimizer.
// The run harness (training/run.h) does the rest: the run directory, config.yaml,
// metrics.csv, checkpoints (checkpoints/ckpt_<epoch>.h5 + LATEST, the scorer under
// /model/scorer), --resume auto (the labels are recomputed, deterministic from the seeds), the
// stop agreement and the parameter-identity check.  No torch: a build without LibTorch
// trains the scorer and places with it.
#pragma once

#include "common/comm/comm.h"
#include "training/run.h"

namespace placeto {

// Runs (or resumes) the training.  Returns kExitDone, or kExitRequeue after a stop signal.
// Throws placeto::Error on bad input.
int run_scorer_training(const RunOptions& options, Communicator& comm);

// Registers the scorer's trainer ("scorer": configs with the top-level key search_policy).
void register_scorer_trainer();

}  // namespace placeto
