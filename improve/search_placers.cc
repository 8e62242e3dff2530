#include "improve/search_placers.h"

#include <chrono>
#include <optional>

#include "common/checkpoint/checkpoint_store.h"
#include "common/error.h"
#include "common/rng.h"
#include "improve/learned_search.h"
#include "improve/what_if.h"
#include "sim/placers/memory_rule.h"
#include "sim/placers/registry.h"
#include "sim/placers/search_util.h"
#include "sim/simulator.h"

namespace placeto {
namespace {

double ms_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
}

class LearnedPlacer : public Placer {
 public:
  LearnedPlacer(std::string name, LoadedScorer s, bool greedy)
      : name_(std::move(name)), loaded_(std::move(s)), greedy_(greedy) {}
  std::string name() const override { return name_; }
  Placement place(const Graph& g, const Cluster& c, const PlacerOptions& o) const override {
    const auto t_call = std::chrono::steady_clock::now();
    const Placement start = search_start(g, c, o, name_.c_str());
    LearnedSearchOptions lo;
    lo.greedy = greedy_;
    if (greedy_) {
      // Fewer tries and rankings than the search: 5-9 ms per ~350-op graph instead of 8-15,
      // for 0.71-0.91 of the best fast placer instead of 0.70-0.92 (docs/LEARNED_SEARCH.md).
      lo.greedy_tries = 32;
      lo.refresh_every = 8;
    }
    lo.seed = static_cast<uint64_t>(o.seed);
    lo.budget = o.budget;
    if (o.time_ms > 0) lo.time_ms = std::max(1e-3, o.time_ms - ms_since(t_call));
    LearnedSearchStats st;
    Placement p = learned_search(g, c, start, &loaded_.scorer, lo, &st);
    if (o.stats) {
      o.stats->simulations = st.simulations;
      o.stats->budget = lo.budget;
    }
    return p;
  }

 private:
  std::string name_;
  mutable LoadedScorer loaded_;  // the scorer's scratch buffers change while placing
  bool greedy_;
};

// "auto": the best fast placement; then, with a scorer, the learned search in slices of an
// eighth of the time (or budget) for as long as a slice improves on the best so far; then
// chain-anneal (anneal that also moves segments of forward chains, which finds room where
// memory binds) from the best so far with whatever is left, and steepest descent if time
// remains.  Each phase returns a placement no worse than its start, so auto never ends above
// the best fast placer, and a learned search that stalls (as on graphs unlike its training
// set) hands its time to annealing instead of wasting it.
class AutoPlacer : public Placer {
 public:
  explicit AutoPlacer(std::optional<LoadedScorer> s) : loaded_(std::move(s)) {}
  std::string name() const override { return "auto"; }
  Placement place(const Graph& g, const Cluster& c, const PlacerOptions& o) const override {
    constexpr double kDefaultMs = 100;
    constexpr int kSlices = 8;
    constexpr double kMinAnnealMs = 2;
    constexpr int64_t kMinAnnealSims = 16;
    constexpr double kMinGain = 0.005;
    const auto t_call = std::chrono::steady_clock::now();
    // By time (time_ms, or 100 ms when neither is given) or by simulations (budget).
    const bool by_time = o.time_ms > 0 || o.budget <= 0;
    const double total_ms = o.time_ms > 0 ? o.time_ms : kDefaultMs;
    int64_t sims = 0;
    auto left_ms = [&] { return total_ms - ms_since(t_call); };
    auto left_sims = [&] { return o.budget - sims; };
    auto has_left = [&](double min_ms, int64_t min_sims) {
      return by_time ? left_ms() >= min_ms : left_sims() >= min_sims;
    };
    Placement best = search_start(g, c, o, "auto");
    std::string phases;
    if (loaded_) {
      // The slices compare with the start's score; without a scorer nothing needs it.
      double best_score = search_score(simulate_once(g, c, best), c);
      const double slice_ms = total_ms / kSlices;
      const int64_t slice_sims = std::max<int64_t>(1, o.budget / kSlices);
      for (int k = 0; k < kSlices && has_left(slice_ms / 4, slice_sims / 4); ++k) {
        LearnedSearchOptions lo;
        lo.seed = derive_seed(static_cast<uint64_t>(o.seed), static_cast<uint64_t>(k));
        if (by_time) {
          lo.time_ms = std::min(slice_ms, left_ms());
        } else {
          lo.budget = std::min(slice_sims, left_sims());
        }
        LearnedSearchStats st;
        Placement p = learned_search(g, c, best, &loaded_->scorer, lo, &st);
        sims += st.simulations;
        // A slice must shorten the step by kMinGain to earn the next one (any improvement of
        // the overflow counts while nothing fits: those scores are above 2^50).
        const bool gained = best_score < 0x1p50 ? st.best_score < best_score * (1 - kMinGain)
                                                : score_improves(st.best_score, best_score);
        if (!gained) {
          if (score_improves(st.best_score, best_score)) {
            best = std::move(p);
            best_score = st.best_score;
          }
          phases = "learned search " + std::to_string(k + 1) + "/" + std::to_string(kSlices);
          break;
        }
        best = std::move(p);
        best_score = st.best_score;
        phases = "learned search " + std::to_string(k + 1) + "/" + std::to_string(kSlices);
      }
    }
    // chain-anneal from the best so far with most of what is left, then steepest descent from
    // its best with the rest: descent ends in a local optimum of single-op moves, which
    // a short anneal may stop short of.
    auto run_phase = [&](const char* method, double share) {
      PlacerOptions a = sub_options(o);
      a.initial = best;
      if (by_time) {
        a.time_ms = std::max(1e-3, share * left_ms());
      } else {
        a.budget = std::max<int64_t>(1, static_cast<int64_t>(share * left_sims()));
      }
      PlacerStats st;
      a.stats = &st;
      best = make_placer(method, a)->place(g, c, a);
      sims += st.simulations;
      phases += phases.empty() ? method : std::string(", then ") + method;
    };
    if (has_left(kMinAnnealMs, kMinAnnealSims)) run_phase("chain-anneal", 1.0);
    // anneal sizes its budget from the time left, so it can end early: descent then.
    if (has_left(kMinAnnealMs, kMinAnnealSims)) run_phase("descent", 1.0);
    if (o.stats) {
      o.stats->simulations = sims;
      o.stats->budget = o.budget;
      o.stats->note = phases;
    }
    return best;
  }

 private:
  // The options of a phase: the caller's seed, no checkpoint, budget, time or stats yet.
  static PlacerOptions sub_options(const PlacerOptions& o) {
    PlacerOptions s;
    s.seed = o.seed;
    return s;
  }
  static SimResult simulate_once(const Graph& g, const Cluster& c, const Placement& p) {
    Simulator sim(g, c);
    return sim.simulate(p);
  }
  mutable std::optional<LoadedScorer> loaded_;
};

}  // namespace

LoadedScorer load_scorer(const std::string& path) {
  LoadedScorer s;
  const CheckpointData data = read_checkpoint_any(path, &s.path);
  if (data.model.count("scorer/w1") == 0)
    throw InputError(s.path +
                     ": not a learned-search checkpoint (no /model/scorer); a Placeto policy "
                     "checkpoint places with --method policy");
  s.scorer = MoveScorer::from_checkpoint(data, s.path);
  if (s.scorer.shape().inputs > WhatIf::kNumFeatures)
    throw InputError(s.path + ": /model/scorer/w1 reads " +
                     std::to_string(s.scorer.shape().inputs) + " what-if features, but this " +
                     "build computes " + std::to_string(WhatIf::kNumFeatures) +
                     " (a checkpoint from a newer version)");
  s.config_yaml = data.config_yaml;
  return s;
}

void register_learned_search_placers() {
  if (find_placer("policy-search")) return;
  PlacerInfo greedy;
  greedy.name = "scorer-greedy";
  greedy.summary =
      "learned greedy improvement: the best fast placement walked by the improving moves a "
      "learned-search checkpoint ranks first (--checkpoint)";
  greedy.kind = PlacerKind::kLearned;
  greedy.takes_budget = true;
  greedy.needs_checkpoint = true;
  greedy.make = [](const PlacerOptions& o) -> std::unique_ptr<Placer> {
    return std::make_unique<LearnedPlacer>("scorer-greedy", load_scorer(o.checkpoint), true);
  };
  register_placer(greedy);
  PlacerInfo ps;
  ps.name = "policy-search";
  ps.summary =
      "learned local search: moves proposed by a learned-search checkpoint, Metropolis on the "
      "simulator, from 'best' (--checkpoint, --time-ms, --budget)";
  ps.kind = PlacerKind::kSearch;
  ps.stochastic = true;
  ps.takes_budget = true;
  ps.takes_start = true;
  ps.needs_checkpoint = true;
  ps.make = [](const PlacerOptions& o) -> std::unique_ptr<Placer> {
    return std::make_unique<LearnedPlacer>("policy-search", load_scorer(o.checkpoint), false);
  };
  register_placer(ps);
  PlacerInfo au;
  au.name = "auto";
  au.summary =
      "the fast placers; then policy-search (with --checkpoint) while it improves; "
      "then chain-anneal for the rest of --time-ms (default 100) or --budget, then descent: "
      "never worse than 'best'";
  au.kind = PlacerKind::kSearch;
  au.stochastic = true;
  au.takes_budget = true;
  au.accepts_checkpoint = true;
  au.make = [](const PlacerOptions& o) -> std::unique_ptr<Placer> {
    std::optional<LoadedScorer> s;
    if (!o.checkpoint.empty()) s = load_scorer(o.checkpoint);
    return std::make_unique<AutoPlacer>(std::move(s));
  };
  register_placer(au);
}

}  // namespace placeto
