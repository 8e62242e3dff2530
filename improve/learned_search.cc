#include "improve/learned_search.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <numeric>

#include "common/error.h"
#include "common/rng.h"
#include "sim/coarsen.h"
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
      : g_(g), what_if_(g, c), scorer_(scorer), o_(o), st_(st), batch_(std::max(1, o.batch)) {
    if (o.group_share > 0) {
      GroupMembers groups = group_members(training_op_groups(g));
      members_ = std::move(groups.members);
      group_index_ = std::move(groups.index);
    }
    if (o.segment_share > 0) chains_ = forward_chains(g);
  }

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
        widen(m, current, rng, &candidate_);
        undo_.clear();
        for (const Move& c : candidate_) {
          undo_.push_back({c.op, current.device[c.op]});
          current.device[c.op] = c.device;
        }
        const double sc = s.simulate(current);
        for (auto it = undo_.rbegin(); it != undo_.rend(); ++it)
          current.device[it->op] = it->device;
        sim_is_current_ = false;
        ++drawn;
        chosen_is_last_ = sc < chosen_score;
        if (chosen_is_last_) {
          chosen = m;
          chosen_moves_ = candidate_;
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
      if (o_.greedy && !score_improves(chosen_score, s.current_score())) {
        fails_ += drawn;
        if (fails_ >= o_.greedy_tries || exhausted) return Proposal::none();
        continue;
      }
      for (const Move& c : chosen_moves_) s.move(c.op, c.device);
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
    if (scorer_) scorer_->score(features_.data(), p, logits_.data(), WhatIf::kNumFeatures);
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

  // The ops that candidate move m moves, with their targets (m first): m alone, or widened
  // to a group, a chain segment or a swap (LearnedSearchOptions).  Ops already at their
  // target are left out.
  void widen(const Move& m, const Placement& current, PlacerRng& rng, std::vector<Move>* out) {
    out->assign(1, m);
    const double total = o_.group_share + o_.segment_share + o_.swap_share;
    if (total <= 0) return;
    double u = rng.uniform01();
    if (u < o_.group_share && !members_.empty()) {
      for (NodeId w : members_[group_index_[m.op]])
        if (w != m.op && current.device[w] != m.device) out->push_back({w, m.device});
      return;
    }
    u -= o_.group_share;
    if (u >= 0 && u < o_.segment_share && !chains_.chains.empty()) {
      const auto& chain = chains_.chains[chains_.chain[m.op]];
      const int len = static_cast<int>(chain.size());
      const int at = chains_.position[m.op];
      const int l = 1 + static_cast<int>(rng.below(len));
      int lo = at, hi = at + l;
      if (rng.uniform01() < 0.5) {
        lo = at - l + 1;
        hi = at + 1;
      }
      for (int i = std::max(lo, 0); i < std::min(hi, len); ++i)
        for (NodeId w : chain[i])
          if (w != m.op && current.device[w] != m.device) out->push_back({w, m.device});
      return;
    }
    u -= o_.segment_share;
    if (u >= 0 && u < o_.swap_share) {
      // The partner: the first move of the ranking from m's target back to m's device.
      const int32_t home = current.device[m.op];
      const size_t limit = std::min(order_.size(), static_cast<size_t>(8 * g_.num_nodes()));
      for (size_t k = 0; k < limit; ++k) {
        const Move& w = moves_[order_[k]];
        if (w.op != m.op && w.device == home && current.device[w.op] == m.device) {
          out->push_back(w);
          return;
        }
      }
    }
  }

  const Graph& g_;
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
  std::vector<Move> candidate_, chosen_moves_, undo_;  // undo_: (op, its device before)
  std::vector<std::vector<NodeId>> members_;           // group moves: each group's ops
  std::vector<int> group_index_;                       // and each op's group
  ForwardChains chains_;                               // segment moves
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

}  // namespace placeto
