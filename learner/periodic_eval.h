// The trainer's periodic evaluation on the test split (eval.csv, best checkpoint).
//
// At construction every rank places its share of the test graphs (graph i belongs to rank
// i mod size) with the classical placers once, through the evaluation protocol's reference
// (sim/placers/protocol.h), keeping `single`, `heft` and the best of them.  evaluate() then places
// the same graphs zero-shot with the current network (greedy, and the best of `eval_samples`
// sampled episodes) and gathers geometric-mean runtime ratios on every rank.  The score that
// selects the best checkpoint is the greedy ratio to the best classical placer (lower is better).
// Infeasible placements (memory over capacity) are counted as failures and rank behind every
// feasible score.  Test graph i runs on cluster_for_graph(config, cluster, graph, i)
// (learner/train_config.h: capped by env.memory_factors as train graph i is).
//
// evaluate() is collective: every rank calls it at the same iterations.  Not thread-safe.
#pragma once

#include <string>
#include <vector>

#include "actors/policy.h"
#include "common/comm/comm.h"
#include "learner/train_config.h"
#include "sim/cluster.h"
#include "sim/graph_set.h"

namespace placeto {

struct EvalSummary {
  int64_t iteration = 0;
  int graphs = 0;
  double greedy_vs_best_classical = 0;   // geometric means over graphs
  double sampled_vs_best_classical = 0;  // best of eval_samples
  double greedy_vs_single = 0;
  double greedy_vs_heft = 0;
  int greedy_failures = 0;  // infeasible greedy placements
  double seconds = 0;       // wall time of this evaluation (this rank)
  // The score used to keep the best checkpoint: lower is better.
  double score() const;
};

class PeriodicEvaluator {
 public:
  PeriodicEvaluator(const TrainConfig& config, std::vector<NamedGraph> test, Cluster cluster,
                    Communicator& comm);
  EvalSummary evaluate(PolicyNet& net, int64_t iteration);
  int num_graphs() const { return static_cast<int>(test_.size()); }
  // The best classical runtime of test graph i (filled on the rank that owns it, 0 elsewhere).
  double best_classical_us(size_t i) const;

  static std::string csv_header();
  static std::string csv_row(const EvalSummary& s, bool best);

 private:
  bool mine(size_t i) const { return static_cast<int>(i % comm_.size()) == comm_.rank(); }

  TrainConfig config_;
  std::vector<NamedGraph> test_;
  Cluster cluster_;
  std::vector<Cluster> clusters_;  // per test graph: cluster_for_graph (env.memory_factors)
  Communicator& comm_;
  // Per test graph (only this rank's entries are filled): reference runtimes.
  std::vector<double> single_us_, heft_us_, best_classical_us_;
};

}  // namespace placeto
