#include "improve/learned_search.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <numeric>

#include "common/error.h"
#include "common/rng.h"
#include "sim/placers/metropolis.h"
#include "sim/placers/search_util.h"
#include "sim/simulator.h"

namespace placeto {
namespace {

double gumbel(Rng& rng) {
  const double u = std::max(1e-300, rng.uniform01());
  return -std::log(-std::log(std::max(1e-300, std::min(u, 1.0 - 1e-16))));
}

// The learned search's proposals on the Metropolis engine (sim/placers/metropolis.h).  The
// moves of the current state are ranked by the scorer (search: an order sampled from the
// scores, mixed with uniform draws; greedy: the scorer's order); a proposal is the best of up
// to `batch` candidates taken down the ranking, each simulated, so it comes with its score.
// Greedy proposes only strictly improving moves (the engine accepts them whatever the
// temperature) and is exhausted after greedy_tries failed candidates in a row, or when the
// ranking runs out; the search draws fresh noise for the same state when it runs out.
class LearnedProposer : public Proposer {
 public:
  LearnedProposer(const Graph& g, const Cluster& c, MoveScorer* scorer,
                  const LearnedSearchOptions& o, LearnedSearchStats* st)
      : what_if_(g, c), scorer_(scorer), o_(o), st_(st), batch_(std::max(1, o.batch)) {}

  // The simulator's latest simulation is the start's: its schedule gives the first ranking.
  void begin(MetropolisSearch& s) override { refresh(s); }

  Proposal propose(MetropolisSearch& s) override {
    Placement& current = s.current();
    PlacerRng& rng = s.rng();
    while (!s.spent()) {
      // Draw up to `batch` candidates, simulating each; the best of them is the proposal.
      const size_t p = moves_.size();
      Move chosen{-1, -1};
      double chosen_score = std::numeric_limits<double>::infinity();
      bool exhausted = false;
      int drawn = 0;
      while (drawn < batch_) {
        size_t pick;
        if (!o_.greedy && o_.epsilon > 0 && rng.uniform01() < o_.epsilon) {
          pick = static_cast<size_t>(rng.below(static_cast<int64_t>(p)));
        } else {
          while (next_ < p && tried_[order_[next_]]) ++next_;
          if (next_ == p) {
            exhausted = true;
            break;
          }
          pick = static_cast<size_t>(order_[next_++]);
        }
        tried_[pick] = 1;
        const Move m = moves_[pick];
        if (current.device[m.op] == m.device) continue;  // a no-op since the ranking was made
        const int32_t old = current.device[m.op];
        current.device[m.op] = m.device;
        const double sc = s.simulate(current);
        current.device[m.op] = old;
        sim_is_current_ = false;
        ++drawn;
        chosen_is_last_ = sc < chosen_score;
        if (chosen_is_last_) {
          chosen = m;
          chosen_score = sc;
        }
      }
      if (chosen.op < 0) {
        if (o_.greedy) return Proposal::none();  // every move of this state failed: a local optimum
        // Fresh noise, same state; the features need the current state's schedule.
        if (!sim_is_current_) resimulate(s);
        refresh(s);
        continue;
      }
      if (o_.greedy && !(chosen_score < s.current_score() * (1 - 1e-12))) {
        fails_ += drawn;
        if (fails_ >= o_.greedy_tries || exhausted) return Proposal::none();
        continue;
      }
      s.move(chosen.op, chosen.device);
      return Proposal::with_score(chosen_score);
    }
    return Proposal::none();  // the budget ran out while drawing
  }

  void accepted(MetropolisSearch& s) override {
    fails_ = 0;
    // The latest simulation was the accepted candidate's when it came last in its batch.
    if (chosen_is_last_) sim_is_current_ = true;
    // Refresh the ranking from the new state's schedule, or keep walking the old ranking for
    // a few more accepted moves.
    if (++since_refresh_ >= std::max(1, o_.refresh_every)) {
      if (!sim_is_current_) resimulate(s);
      refresh(s);
    }
  }

 private:
  void resimulate(MetropolisSearch& s) {
    s.simulate(s.current());
    sim_is_current_ = true;
  }

  // Features and scores of every move of the current state, and the order to try them in.
  // REQUIRES: the simulator's latest simulation is the current state's.
  void refresh(MetropolisSearch& s) {
    what_if_.compute(s.simulator(), s.current(), &features_, &moves_);
    const size_t p = moves_.size();
    logits_.assign(p, 0.0f);
    if (scorer_) scorer_->score(features_.data(), p, logits_.data());
    keys_.resize(p);
    for (size_t i = 0; i < p; ++i)
      keys_[i] = (o_.greedy && scorer_) ? logits_[i]
                                        : logits_[i] / o_.sample_temperature + gumbel(s.rng());
    order_.resize(p);
    std::iota(order_.begin(), order_.end(), 0);
    std::sort(order_.begin(), order_.end(), [&](int32_t a, int32_t b) {
      return keys_[a] > keys_[b] || (keys_[a] == keys_[b] && a < b);
    });
    tried_.assign(p, 0);
    next_ = 0;
    fails_ = 0;
    since_refresh_ = 0;
    ++st_->refreshes;
  }

  WhatIf what_if_;
  MoveScorer* scorer_;
  const LearnedSearchOptions& o_;
  LearnedSearchStats* st_;
  const int batch_;
  std::vector<float> features_, logits_;
  std::vector<Move> moves_;
  std::vector<int32_t> order_;
  std::vector<double> keys_;
  std::vector<char> tried_;
  size_t next_ = 0;
  int fails_ = 0, since_refresh_ = 0;
  bool chosen_is_last_ = false;  // the latest proposal's candidate was the last one simulated
  bool sim_is_current_ = true;   // the simulator's latest simulation is the current state's
};

}  // namespace

Placement learned_search(const Graph& g, const Cluster& c, const Placement& start,
                         MoveScorer* scorer, const LearnedSearchOptions& o,
                         LearnedSearchStats* stats) {
  const auto t_call = std::chrono::steady_clock::now();
  LearnedSearchStats st;
  MetropolisSearch search(g, c, o.seed);
  MetropolisOptions mo;
  const double start_score = mo.score(search.simulator().simulate(start), c);
  st.start_score = st.best_score = start_score;
  if (c.num_devices() == 1 || g.num_nodes() == 0) {
    if (stats) *stats = st;
    return start;
  }
  mo.schedule = TemperatureSchedule::kByFractionSpent;
  mo.budget = o.budget > 0 ? o.budget : (o.greedy ? 20LL * g.num_nodes() : 2000);
  mo.time_ms = o.time_ms;
  mo.started = t_call;
  mo.start_score = start_score;
  // Greedy at zero temperature: it proposes only improving moves.
  mo.t_start = o.greedy ? 0.0 : o.t_start_times_devices / c.num_devices() * start_score;
  mo.t_end = o.greedy ? 0.0 : o.t_end * start_score;
  LearnedProposer proposer(g, c, scorer, o, &st);
  Placement best = search.run(start, proposer, mo);
  st.simulations = search.stats().simulations;
  st.accepted = search.stats().accepted;
  st.best_score = search.stats().best_score;
  if (stats) *stats = st;
  return best;
}

int64_t teacher_trajectory(const Graph& g, const Cluster& c, const Placement& start,
                           MoveScorer* follow, const TeacherOptions& o, uint64_t seed,
                           std::vector<TeacherState>* out) {
  const int num_dev = c.num_devices();
  if (num_dev < 2 || g.num_nodes() == 0) return 0;
  Simulator sim(g, c);
  WhatIf what_if(g, c);
  Rng rng(seed);
  Placement current = start;
  double current_score = search_score(sim.simulate(current), c);
  int64_t simulations = 1;
  std::vector<float> features, logits;
  std::vector<Move> moves;
  std::vector<double> gain;
  std::vector<int32_t> improving, others;
  for (int step = 0; step < o.max_moves; ++step) {
    current_score = search_score(sim.simulate(current), c);
    ++simulations;
    what_if.compute(sim, current, &features, &moves);
    const size_t p = moves.size();
    gain.resize(p);
    for (size_t i = 0; i < p; ++i) {
      const int32_t old = current.device[moves[i].op];
      current.device[moves[i].op] = moves[i].device;
      gain[i] = (current_score - search_score(sim.simulate(current), c)) / current_score;
      current.device[moves[i].op] = old;
    }
    simulations += static_cast<int64_t>(p);
    improving.clear();
    others.clear();
    for (size_t i = 0; i < p; ++i)
      (gain[i] > 1e-12 ? improving : others).push_back(static_cast<int32_t>(i));
    if (improving.empty()) break;  // a local optimum
    std::sort(improving.begin(), improving.end(), [&](int32_t a, int32_t b) {
      return gain[a] > gain[b] || (gain[a] == gain[b] && a < b);
    });
    const double best_gain = gain[improving[0]];
    const size_t keep_improving =
        std::min(improving.size(), static_cast<size_t>(std::max(1, o.keep_rows * 3 / 4)));
    // The rest of the improving moves join the pool of others.
    for (size_t k = keep_improving; k < improving.size(); ++k) others.push_back(improving[k]);
    improving.resize(keep_improving);
    const size_t keep_others =
        std::min(others.size(),
                 static_cast<size_t>(std::max(0, o.keep_rows - static_cast<int>(keep_improving))));
    for (size_t k = 0; k < keep_others; ++k) {  // partial Fisher-Yates
      const size_t j = k + static_cast<size_t>(rng.below(static_cast<int64_t>(others.size() - k)));
      std::swap(others[k], others[j]);
    }
    TeacherState ts;
    ts.best_gain = best_gain;
    const size_t rows = keep_improving + keep_others;
    ts.features.resize(rows * WhatIf::kNumFeatures);
    ts.target.assign(rows, 0.0f);
    double total = 0;
    for (size_t r = 0; r < rows; ++r) {
      const int32_t i = r < keep_improving ? improving[r] : others[r - keep_improving];
      std::copy(features.begin() + static_cast<size_t>(i) * WhatIf::kNumFeatures,
                features.begin() + static_cast<size_t>(i + 1) * WhatIf::kNumFeatures,
                ts.features.begin() + r * WhatIf::kNumFeatures);
      if (gain[i] > 1e-12) {
        const double w = std::exp(o.sharpness * (gain[i] / best_gain - 1.0));
        ts.target[r] = static_cast<float>(w);
        total += w;
      }
    }
    for (float& t : ts.target) t = static_cast<float>(t / total);
    out->push_back(std::move(ts));
    // The next state.
    int32_t take = improving[0];
    if (follow) {
      logits.resize(p);
      follow->score(features.data(), p, logits.data());
      int32_t first = -1;
      for (size_t i = 0; i < p; ++i)
        if (gain[i] > 1e-12 && (first < 0 || logits[i] > logits[first]))
          first = static_cast<int32_t>(i);
      take = first;
    }
    current.device[moves[take].op] = moves[take].device;
  }
  return simulations;
}

ReinforceStats reinforce_moves(const Graph& g, const Cluster& c, const Placement& start,
                               MoveScorer& scorer, const ReinforceOptions& o, uint64_t seed,
                               float* grad) {
  PLACETO_CHECK(o.episodes >= 2 && o.steps >= 1 && o.temperature > 0);
  ReinforceStats st;
  Simulator sim(g, c);
  st.start_score = search_score(sim.simulate(start), c);
  ++st.simulations;
  if (c.num_devices() < 2 || g.num_nodes() == 0) {
    st.mean_final_score = st.start_score;
    return st;
  }
  WhatIf what_if(g, c);
  Rng rng(seed);
  const size_t np = scorer.num_params();
  const size_t total_steps = static_cast<size_t>(o.episodes) * o.steps;
  // Per step: the gradient of -log pi(a | s), weighted by the advantage once returns are known.
  std::vector<float> step_grads(total_steps * np, 0.0f);
  std::vector<double> rewards(total_steps, 0.0);
  std::vector<float> features, logits, target;
  std::vector<Move> moves;
  std::vector<double> cdf;
  int64_t improved = 0;
  double final_sum = 0;
  for (int e = 0; e < o.episodes; ++e) {
    Placement current = start;
    double current_score = search_score(sim.simulate(current), c);
    ++st.simulations;
    bool stale = true;  // the features describe another state than `current`
    for (int t = 0; t < o.steps; ++t) {
      if (stale) {
        // The simulator's latest call was `current` (the episode's start, or the move just
        // kept): its schedule is the one the features read.
        what_if.compute(sim, current, &features, &moves);
        logits.resize(moves.size());
        scorer.score(features.data(), moves.size(), logits.data());
        // Inverse-CDF sampling of softmax(logits / temperature).
        double zmax = -std::numeric_limits<double>::infinity();
        for (float z : logits) zmax = std::max(zmax, z / o.temperature);
        cdf.resize(moves.size());
        double acc = 0;
        for (size_t i = 0; i < moves.size(); ++i) {
          acc += std::exp(logits[i] / o.temperature - zmax);
          cdf[i] = acc;
        }
        stale = false;
      }
      const double u = rng.uniform01() * cdf.back();
      const size_t a =
          std::min(moves.size() - 1,
                   static_cast<size_t>(std::upper_bound(cdf.begin(), cdf.end(), u) - cdf.begin()));
      const size_t k = static_cast<size_t>(e) * o.steps + t;
      target.assign(moves.size(), 0.0f);
      target[a] = 1.0f;
      scorer.listwise_loss(features.data(), moves.size(), target.data(), step_grads.data() + k * np,
                           1.0, nullptr, o.temperature);
      const int32_t old = current.device[moves[a].op];
      current.device[moves[a].op] = moves[a].device;
      const double s = search_score(sim.simulate(current), c);
      ++st.simulations;
      ++st.proposals;
      if (s < current_score * (1 - 1e-12)) {
        rewards[k] = (current_score - s) / st.start_score;
        current_score = s;
        stale = true;
        ++improved;
      } else {
        current.device[moves[a].op] = old;
      }
    }
    final_sum += current_score;
  }
  // Returns, leave-one-out advantages, and the weighted sum of the step gradients.
  std::vector<double> ret(total_steps);
  for (int e = 0; e < o.episodes; ++e) {
    double acc = 0;
    for (int t = o.steps; t-- > 0;) {
      const size_t k = static_cast<size_t>(e) * o.steps + t;
      acc += rewards[k];
      ret[k] = acc;
    }
  }
  const double others = o.episodes - 1;
  for (int t = 0; t < o.steps; ++t) {
    double sum = 0;
    for (int e = 0; e < o.episodes; ++e) sum += ret[static_cast<size_t>(e) * o.steps + t];
    for (int e = 0; e < o.episodes; ++e) {
      const size_t k = static_cast<size_t>(e) * o.steps + t;
      const double adv = (ret[k] - (sum - ret[k]) / others) / static_cast<double>(total_steps);
      if (adv == 0) continue;
      const float* gk = step_grads.data() + k * np;
      for (size_t i = 0; i < np; ++i) grad[i] += static_cast<float>(adv * gk[i]);
    }
  }
  st.mean_final_score = final_sum / o.episodes;
  st.improved_fraction =
      st.proposals > 0 ? static_cast<double>(improved) / static_cast<double>(st.proposals) : 0;
  return st;
}

}  // namespace placeto
