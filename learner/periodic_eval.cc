#include "learner/periodic_eval.h"

#include <chrono>
#include <cmath>
#include <cstdio>

#include "common/error.h"
#include "learner/policy_io.h"
#include "sim/placers/evaluation.h"
#include "sim/placers/protocol.h"

namespace placeto {

double EvalSummary::score() const {
  // Failures first, then the ratio: a policy that fits memory beats a faster one that does not.
  return greedy_failures * 1e6 + greedy_vs_best_classical;
}

PeriodicEvaluator::PeriodicEvaluator(const TrainConfig& config, std::vector<NamedGraph> test,
                                     Cluster cluster, Communicator& comm)
    : config_(config), test_(std::move(test)), cluster_(std::move(cluster)), comm_(comm) {
  const size_t n = test_.size();
  single_us_.assign(n, 0);
  heft_us_.assign(n, 0);
  best_classical_us_.assign(n, 0);
  for (size_t i = 0; i < n; ++i)
    clusters_.push_back(cluster_for_graph(config_, cluster_, test_[i].graph, i));
  PlacerOptions po;
  po.seed = static_cast<int64_t>(config_.seed);
  for (size_t i = 0; i < n; ++i) {
    if (!mine(i)) continue;
    // The evaluation protocol's reference (sim/placers/protocol.h): the same best classical
    // placement as placeto compare and placeto eval report for this graph.
    const ClassicalReference ref = classical_reference(test_[i].graph, clusters_[i], po);
    single_us_[i] = ref.single_run().evaluation.runtime_us;
    for (const PlacerRun& run : ref.runs)
      if (run.method == "heft") heft_us_[i] = run.evaluation.runtime_us;
    best_classical_us_[i] = ref.best_run().evaluation.runtime_us;
  }
}

double PeriodicEvaluator::best_classical_us(size_t i) const { return best_classical_us_.at(i); }

EvalSummary PeriodicEvaluator::evaluate(PolicyNet& net, int64_t iteration) {
  const auto t0 = std::chrono::steady_clock::now();
  const size_t n = test_.size();
  // Per graph: log greedy/best, log sampled/best, log greedy/single, log greedy/heft, failed.
  constexpr int kCols = 5;
  std::vector<double> local(n * kCols, 0.0);
  for (size_t i = 0; i < n; ++i) {
    if (!mine(i)) continue;
    const Graph& g = test_[i].graph;
    const uint64_t seed = config_.seed + 7919 * static_cast<uint64_t>(i);
    const Cluster& cluster = clusters_[i];
    PolicyPlacement greedy = place_with_net(net, config_, g, cluster, 1, seed);
    PolicyPlacement sampled =
        place_with_net(net, config_, g, cluster, std::max(1, config_.eval_samples), seed);
    const bool ok = evaluate_placement(g, cluster, greedy.placement).feasible;
    double* row = &local[i * kCols];
    row[0] = std::log(greedy.runtime_us / best_classical_us_[i]);
    row[1] = std::log(sampled.runtime_us / best_classical_us_[i]);
    row[2] = std::log(greedy.runtime_us / single_us_[i]);
    row[3] = std::log(greedy.runtime_us / heft_us_[i]);
    row[4] = ok ? 0.0 : 1.0;
  }
  // Each graph's row is non-zero on exactly one rank: summing the gathered copies merges them.
  std::vector<double> all = comm_.all_gather_doubles(local);
  std::vector<double> merged(n * kCols, 0.0);
  for (int r = 0; r < comm_.size(); ++r)
    for (size_t j = 0; j < n * kCols; ++j) merged[j] += all[static_cast<size_t>(r) * n * kCols + j];
  EvalSummary s;
  s.iteration = iteration;
  s.graphs = static_cast<int>(n);
  double sum[4] = {0, 0, 0, 0};
  for (size_t i = 0; i < n; ++i) {
    for (int c = 0; c < 4; ++c) sum[c] += merged[i * kCols + c];
    s.greedy_failures += merged[i * kCols + 4] > 0.5 ? 1 : 0;
  }
  const double inv = n ? 1.0 / static_cast<double>(n) : 0.0;
  s.greedy_vs_best_classical = std::exp(sum[0] * inv);
  s.sampled_vs_best_classical = std::exp(sum[1] * inv);
  s.greedy_vs_single = std::exp(sum[2] * inv);
  s.greedy_vs_heft = std::exp(sum[3] * inv);
  s.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return s;
}

std::string PeriodicEvaluator::csv_header() {
  return "iteration,graphs,greedy_vs_best_classical,sampled_vs_best_classical,greedy_vs_single,"
         "greedy_vs_heft,greedy_failures,eval_s,best\n";
}

std::string PeriodicEvaluator::csv_row(const EvalSummary& s, bool best) {
  char buf[256];
  std::snprintf(buf, sizeof buf, "%lld,%d,%.6f,%.6f,%.6f,%.6f,%d,%.3f,%d\n",
                static_cast<long long>(s.iteration), s.graphs, s.greedy_vs_best_classical,
                s.sampled_vs_best_classical, s.greedy_vs_single, s.greedy_vs_heft,
                s.greedy_failures, s.seconds, best ? 1 : 0);
  return buf;
}

}  // namespace placeto
