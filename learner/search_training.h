// Training the learned search's move scorer (improve/move_scorer.h) by imitating the
// best-move teacher (improve/learned_search.h, teacher_trajectory), on every rank of a
// Communicator: each rank labels its share of the (graph, cluster, start) trajectories, the
// gradients of the listwise loss are summed with all_reduce, and every rank applies the same
// Adam step.  Rank 0 writes config.yaml, metrics.csv, logs and checkpoints
// (checkpoints/ckpt_<epoch>.h5 + LATEST, the scorer under /model/scorer); --resume auto
// relabels the data (deterministic from the seeds) and continues from the latest epoch.
//
// A config is a YAML file with one top-level key, `search_policy:` (docs/LEARNED_SEARCH.md
// lists the fields); `placeto_actor` and `placeto train` run it when they see that key.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/comm/comm.h"
#include "learner/training_run.h"

namespace placeto {

struct SearchTrainConfig {
  std::vector<std::string> families = {"ptb"};  // generated at their default sizes
  int graphs = 8;                               // per family
  int64_t graph_seed = 11;
  std::vector<int> devices = {2, 3, 4};  // identical k80 devices
  std::vector<std::string> clusters;     // cluster YAML files, trained on as well
  int starts = 2;         // trajectories per (graph, cluster): from 'best', then perturbed
  double perturb = 0.15;  // share of ops given a random device in the perturbed starts
  int max_moves = 30;
  int keep_rows = 256;
  double sharpness = 4;
  int epochs = 30;
  int batch_states = 32;
  double lr = 3e-3;
  double lr_end = 3e-4;  // linear decay over the epochs
  double clip_norm = 5;
  int hidden1 = 32;
  int hidden2 = 16;
  int64_t seed = 1;
  int keep_checkpoints = 3;
  // Weigh each state's loss by its best move's gain over the mean: the states where the
  // choice matters most count most.
  bool gain_weighting = true;
  // Reinforcement learning after the imitation (improve/learned_search.h, reinforce_moves):
  // rl_epochs more epochs, each running every (graph, cluster, start) of the config once as
  // rl_episodes episodes of rl_steps proposals drawn at rl_temperature, one Adam step (a fresh
  // optimizer, constant rate rl_lr) per rl_batch starts per rank.  0: imitation only.
  int rl_epochs = 0;
  int rl_episodes = 8;
  int rl_steps = 32;
  double rl_temperature = 0.25;
  double rl_lr = 3e-4;
  int rl_batch = 2;
};

// True when the YAML file's top level has the key `search_policy` (then it is a config for
// run_search_training, not for run_training).  False for files that cannot be read.
bool is_search_training_config(const std::string& path);

// Reads `search_policy:` from `path` with key=value overrides (keys without the prefix).
// InputError names the file, the field and the value.
SearchTrainConfig load_search_train_config(const std::string& path,
                                           const std::vector<std::string>& overrides);
std::string search_train_config_to_yaml(const SearchTrainConfig& c);

// Runs (or resumes) the training.  Returns kExitDone.  Throws placeto::Error on bad input.
int run_search_training(const RunOptions& options, Communicator& comm);

}  // namespace placeto
