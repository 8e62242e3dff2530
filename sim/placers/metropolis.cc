#include "sim/placers/metropolis.h"

#include <cmath>

namespace placeto {

MetropolisSearch::MetropolisSearch(const Graph& graph, const Cluster& cluster, uint64_t seed)
    : graph_(graph), cluster_(cluster), sim_(graph, cluster), rng_(seed) {}

double MetropolisSearch::fraction_spent() const {
  if (options_.time_ms > 0) return ms_since(options_.started) / options_.time_ms;
  return static_cast<double>(stats_.simulations) / static_cast<double>(options_.budget);
}

bool MetropolisSearch::spent() const {
  if (options_.schedule == TemperatureSchedule::kByFractionSpent) return fraction_spent() >= 1.0;
  return step_ >= options_.budget ||
         (options_.time_ms > 0 && ms_since(options_.started) >= options_.time_ms);
}

Placement MetropolisSearch::run(const Placement& start, Proposer& proposer,
                                const MetropolisOptions& options) {
  options_ = options;
  if (options_.budget <= 0 &&
      !(options_.schedule == TemperatureSchedule::kByFractionSpent && options_.time_ms > 0))
    options_.budget = 1;
  stats_ = MetropolisStats{};
  step_ = 0;
  undo_.clear();
  current_ = start;
  current_score_ = options_.start_score ? *options_.start_score
                                        : options_.score(sim_.simulate(current_), cluster_);
  Placement best = current_;
  double best_score = current_score_;
  stats_.start_score = stats_.best_score = current_score_;
  const bool geometric = options_.schedule == TemperatureSchedule::kGeometricPerStep;
  // anneal's arithmetic, kept exactly: a per-step factor, applied after every step.
  const double cooling =
      options_.budget > 1 ? std::pow(options_.t_end / options_.t_start, 1.0 / (options_.budget - 1))
                          : 1.0;
  temperature_ = options_.t_start;
  const auto t_run = std::chrono::steady_clock::now();
  proposer.begin(*this);
  for (;; ++step_) {
    if (options_.time_limit_s > 0 && (step_ & 63) == 0 &&
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t_run).count() >
            options_.time_limit_s)
      break;
    if (geometric) {
      if (step_ > 0) temperature_ *= cooling;
    } else {
      const double spent = fraction_spent();
      if (spent >= 1.0) break;
      temperature_ = options_.t_start > 0
                         ? options_.t_start * std::pow(options_.t_end / options_.t_start, spent)
                         : 0.0;
    }
    if (geometric && spent()) break;
    undo_.clear();
    const Proposal proposal = proposer.propose(*this);
    if (!proposal.made) {
      // Whatever was changed without a proposal is put back.
      for (auto it = undo_.rbegin(); it != undo_.rend(); ++it)
        current_.device[it->first] = it->second;
      undo_.clear();
      break;
    }
    ++stats_.steps;
    const double s = proposal.scored ? proposal.score : simulate(current_);
    const double delta = s - current_score_;
    if (delta <= 0 || rng_.uniform01() < std::exp(-delta / temperature_)) {
      current_score_ = s;
      ++stats_.accepted;
      if (s < best_score) {
        best_score = s;
        best = current_;
      }
      proposer.accepted(*this);
    } else {
      for (auto it = undo_.rbegin(); it != undo_.rend(); ++it)
        current_.device[it->first] = it->second;
      proposer.rejected(*this);
    }
  }
  stats_.best_score = best_score;
  return best;
}

}  // namespace placeto
