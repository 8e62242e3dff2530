#include "improve/search_placers.h"

#include <chrono>
#include <optional>

#include "common/checkpoint/checkpoint_store.h"
#include "common/error.h"
#include "improve/learned_search.h"
#include "sim/placers/registry.h"
#include "sim/placers/search_util.h"

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

// "auto": the best fast placement, then the rest of the time in the learned search (with a
// checkpoint) or in steepest descent.
class AutoPlacer : public Placer {
 public:
  explicit AutoPlacer(std::optional<LoadedScorer> s) : loaded_(std::move(s)) {}
  std::string name() const override { return "auto"; }
  Placement place(const Graph& g, const Cluster& c, const PlacerOptions& o) const override {
    constexpr double kDefaultMs = 100;
    const auto t_call = std::chrono::steady_clock::now();
    const Placement start = search_start(g, c, o, "auto");
    const double total_ms = o.time_ms > 0 ? o.time_ms : (o.budget > 0 ? 0 : kDefaultMs);
    const double left_ms = total_ms > 0 ? std::max(1e-3, total_ms - ms_since(t_call)) : 0;
    if (loaded_) {
      LearnedSearchOptions lo;
      lo.seed = static_cast<uint64_t>(o.seed);
      lo.budget = o.budget;
      lo.time_ms = left_ms;
      LearnedSearchStats st;
      Placement p = learned_search(g, c, start, &loaded_->scorer, lo, &st);
      if (o.stats) o.stats->simulations = st.simulations;
      return p;
    }
    PlacerOptions d = o;
    d.initial = start;
    d.time_ms = left_ms;
    d.checkpoint.clear();
    return make_placer("descent", d)->place(g, c, d);
  }

 private:
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
      "the fast placers, then policy-search (with --checkpoint) or descent for the rest of "
      "--time-ms (default 100): never worse than 'best'";
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
