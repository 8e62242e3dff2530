// The best-move teacher that the move scorer imitates (improve/scorer_training.h), and the
// jobs it labels: every (graph, cluster, start) of a scorer config.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "improve/move_scorer.h"
#include "improve/scorer_config.h"
#include "sim/cluster.h"
#include "sim/graph.h"

namespace placeto {

// One state labelled by the best-move teacher: the what-if rows of a sample of its moves and
// the target distribution over them (a softmax of each move's gain relative to the best
// gain, over the improving moves).
struct TeacherState {
  std::vector<float> features;  // rows x WhatIf::kNumFeatures
  std::vector<float> target;    // rows
  double best_gain = 0;         // relative gain of the best move
};

struct TeacherOptions {
  int max_moves = 40;    // states recorded per trajectory
  int keep_rows = 256;   // moves kept per state: every improving one (best first), then random
  double sharpness = 4;  // target_i ~ exp(sharpness * gain_i / best_gain)
};

// Walks from `start`, labelling each state by simulating all of its N (D - 1) moves.  With
// `follow` == nullptr the walk takes the best move (steepest descent); otherwise it takes the
// move the scorer's greedy search would (the first improving one in score order: DAgger).
// Stops at a local optimum or after max_moves states.  Returns the simulations spent.
int64_t teacher_trajectory(const Graph& g, const Cluster& c, const Placement& start,
                           MoveScorer* follow, const TeacherOptions& options, uint64_t seed,
                           std::vector<TeacherState>* out);

// One labelled trajectory's worth of work: a graph of a family, a cluster of the config, and
// which start (0: the best fast placement; later ones perturbed).
struct LabelJob {
  std::string family;  // kGraphFileJob: graph indexes the config's graph_files
  int graph = 0;
  int cluster = 0;  // index into the clusters trained on
  int start = 0;
};

inline constexpr const char kGraphFileJob[] = "@file";

// Every job of the config, in the order the ranks share them (job k goes to rank k % size):
// the families' graphs on every cluster, then the graph files on the clusters of at most
// graph_files_max_devices devices.  `cluster_devices`: each cluster's device count.
std::vector<LabelJob> label_jobs(const ScorerTrainConfig& cfg,
                                 const std::vector<int>& cluster_devices);
Graph label_job_graph(const ScorerTrainConfig& cfg, const LabelJob& j);
// The start of job k: the best fast placement, with a share `perturb` of its ops moved to
// random devices for the starts after the first.
Placement label_job_start(const ScorerTrainConfig& cfg, const LabelJob& j, size_t k, const Graph& g,
                          const Cluster& c);

}  // namespace placeto
