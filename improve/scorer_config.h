// The move scorer's training config: a YAML file with one top-level key, `search_policy:`
// (docs/LEARNED_SEARCH.md lists the fields).  Read once into a plain struct, with key=value
// overrides (keys without the prefix) and "did you mean" for a misspelt key, and written back
// whole into the run directory and every checkpoint.  The learning-rate and clipping keys
// have the Placeto trainer's names (lr_final, grad_clip); the older names lr_end and
// clip_norm, which configs and checkpoints before this version hold, are read as aliases.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace placeto {

inline constexpr const char kScorerConfigKey[] = "search_policy";

struct ScorerTrainConfig {
  std::vector<std::string> families = {"ptb"};  // generated at their default sizes
  int graphs = 8;                               // per family
  int64_t graph_seed = 11;
  std::vector<int> devices = {2, 3, 4};  // identical k80 devices
  std::vector<std::string> clusters;     // cluster YAML files, trained on as well
  // Graph files (e.g. imported real models, `placeto import --training`), trained on as well,
  // on the clusters of at most graph_files_max_devices devices (0: on every cluster).  Paths
  // are relative to the working directory, as `clusters`.
  std::vector<std::string> graph_files;
  int graph_files_max_devices = 0;
  // Capped memory (issue #33): for each factor f and each device count of `devices`, also
  // that many k80 devices of f x the graph's balanced share each (with_balanced_capacity in
  // sim/placers/memory.h).  Empty: no capped clusters.
  std::vector<double> memory_factors;
  // What-if columns the scorer reads, the first ones (improve/what_if.h): 0 = all that this
  // build computes; 27 = those before issue #33 (to reproduce an older run).  A resumed run
  // without it reads as many as its checkpoint.
  int features = 0;
  int starts = 2;         // trajectories per (graph, cluster): from 'best', then perturbed
  double perturb = 0.15;  // share of ops given a random device in the perturbed starts
  int max_moves = 30;
  int keep_rows = 256;
  double sharpness = 4;
  int epochs = 30;
  int batch_states = 32;
  double lr = 3e-3;
  double lr_final = 3e-4;  // linear decay over the epochs
  double grad_clip = 5;    // global L2 norm; 0: no clipping
  int hidden1 = 32;
  int hidden2 = 16;
  int64_t seed = 1;
  int keep_checkpoints = 3;
  // Weigh each state's loss by its best move's gain over the mean: the states where the
  // choice matters most count most.
  bool gain_weighting = true;
  // Reinforcement learning after the imitation (improve/scorer_rl.h, reinforce_moves):
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

// Reads `search_policy:` from `path` with key=value overrides.  InputError names the file,
// the field and the value.
ScorerTrainConfig load_scorer_train_config(const std::string& path,
                                           const std::vector<std::string>& overrides);
// The same from YAML text (a checkpoint's stored config); `source` names it in errors.
ScorerTrainConfig parse_scorer_train_config(const std::string& yaml_text, const std::string& source,
                                            const std::vector<std::string>& overrides);
// Every field, under `search_policy:`.
std::string scorer_train_config_to_yaml(const ScorerTrainConfig& c);

}  // namespace placeto
