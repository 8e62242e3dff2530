#include "improve/search_placers.h"

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <optional>

#include "common/checkpoint/checkpoint_store.h"
#include "common/error.h"
#include "common/rng.h"
#include "improve/learned_search.h"
#include "improve/what_if.h"
#include "placeto/config.h"
#include "sim/placers/memory_rule.h"
#include "sim/placers/registry.h"
#include "sim/placers/search_util.h"
#include "sim/simulator.h"

namespace placeto {
namespace {

// The share of candidates widened to the op's training group (--search-set group_share):
// picked on the tuning graphs of experiments/move_kinds.sh (generator seed 31, equal budgets,
// RESULTS.md section 15), where 0.3 gave 0.96 of the single-op search's step on nmt at 8 and
// 16 devices, 0.97-0.99 on cifar10 and 0.99-1.01 elsewhere but ptb at 8 devices (1.025);
// segment and swap moves gained less and are off unless asked for.
constexpr double kDefaultGroupShare = 0.3;
// The learned search's options as the placers start them: single-op moves widened to groups.
LearnedSearchOptions placer_search_options() {
  LearnedSearchOptions lo;
  lo.group_share = kDefaultGroupShare;
  return lo;
}
// auto's first descent without a scorer: at most this share of the time left after the fast
// placers, on clusters of at most kDescentFirstMaxDevices devices (--search-set descent_share
// overrides it and kDescentFirstShareWithScorer; 0: no descent).  Picked on the tuning graphs
// (experiments/auto_tune.sh 31, 20,000 simulations, no model; RESULTS.md section 15): over the
// better of anneal and descent, 0.5 took 4 devices from 1.030 to 0.996 (ptb from 1.227 to 1.034)
// but 8 devices from 0.989 to 1.011 and 16 from 0.961 to 0.990, where a descent step costs
// N (D - 1) simulations and the descent gets few steps.
constexpr double kDefaultDescentShare = 0.5;
constexpr int kDescentFirstMaxDevices = 4;
// With a scorer the descent runs before the learned search, with this share of the time (or
// budget).  After the learned search (before 0b149d7) it started from a placement
// the learned slices and the probe had moved, often ran out of time before its local optimum,
// and ended far above a plain descent: on ptb at 4 devices with the scorer trained without ptb,
// 5 of 16 tuning runs above 1.02x the better of anneal and descent (worst 1.150).  Tuning
// graphs (ptb, nmt, cifar10 of generator seed 404 with the scorers trained without them, search
// seeds 1-4; linalg of seed 404 and GoogLeNet, Inception-V3 at f = 1.2, seeds 11-13, with the
// default model; RESULTS.md section 15, "Descent before the learned search"), over the better
// of anneal and descent at 1 s, ptb / nmt / cifar10: after 0.995 / 0.970 / 0.948, first with
// 0.2 0.957 / 0.945 / 0.950, 0.3 0.947 / 0.946 / 0.955, 0.5 0.961 / 0.955 / 0.957, 0.7 0.959 /
// 0.957 / 0.964; no run above 1.02 with 0.2-0.5.  At 8 devices the same with 0.3 and 0.5 was
// worse (ptb 0.917 -> 0.925 and 0.936): there a descent step costs N (D - 1) simulations.
constexpr double kDescentFirstShareWithScorer = 0.3;
// auto's chain-anneal starts at this temperature (a fraction of its start's score) instead of
// anneal's 2% when the learned search or the descent has improved the start: from a placement a
// local search has already shortened, a hot walk spends most of a short run undoing that work.
// Picked on tuning graphs (ptb, nmt and linalg generated with seed 404, 4 of each, at 4, 8 and
// 16 devices, seeds 1-2; Inception-V3 and GoogLeNet at f = 1.2 with seeds 11-12; RESULTS.md
// section 15): over the better of anneal and descent at 1 s, 0.2% and 0.5% took the geometric
// mean from 0.978 to 0.962 and 0.964, and the runs above 1.02 from 10 to 7 of 72.
constexpr double kWarmStartTemperature = 0.005;

class LearnedPlacer : public Placer {
 public:
  LearnedPlacer(std::string name, LoadedScorer s, bool greedy)
      : name_(std::move(name)), loaded_(std::move(s)), greedy_(greedy) {}
  std::string name() const override { return name_; }
  Placement place(const Graph& g, const Cluster& c, const PlacerOptions& o) const override {
    const auto t_call = std::chrono::steady_clock::now();
    const Placement start = search_start(g, c, o, name_.c_str());
    LearnedSearchOptions lo = placer_search_options();
    lo.greedy = greedy_;
    if (greedy_) {
      // Fewer tries and rankings than the search: 5-9 ms per ~350-op graph instead of 8-15,
      // for 0.71-0.91 of the best fast placer instead of 0.70-0.92 (docs/LEARNED_SEARCH.md).
      lo.greedy_tries = 32;
      lo.refresh_every = 8;
    }
    apply_search_settings(o.search_settings, &lo);
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

// "auto": the best fast placement; then at up to 4 devices a steepest descent with a share of
// the time (descent_share: 0.3 with a scorer, 0.5 without); then, with a scorer, the learned
// search in slices of an eighth of what is left for as long as a slice improves on the best so
// far by 0.5%, with one slice of chain-anneal after its first gaining slice (the probe): from
// then on a learned slice must also gain more than the probe did, or the annealing takes over;
// then chain-anneal (anneal that also moves segments of forward chains, which finds room where
// memory binds) from the best so far with whatever is left (it ends at the time given or spends
// the budget; 2c48ced), starting colder (kWarmStartTemperature) when an earlier phase has
// improved the start.  The probe and the cold start were picked on tuning graphs (ptb, nmt and
// linalg generated with seed 404, 4 each, 4/8/16 devices, seeds 1-2, the default model and the
// scorer trained without ptb; Inception-V3 and GoogLeNet at f = 1.2 with seeds 11-12;
// experiments/RESULTS.md section 15, "A colder annealing and a measured hand-over in `auto`").  The
// scorer is the default model unless --checkpoint names one or none. Each phase returns a placement
// no worse than its start, so auto never ends above the best fast placer, and a learned search that
// stalls (as on graphs unlike its training set) hands its time to annealing instead of wasting it.
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
    LearnedSearchOptions settings = placer_search_options();
    double descent_share = c.num_devices() > kDescentFirstMaxDevices ? 0
                           : loaded_                                 ? kDescentFirstShareWithScorer
                                                                     : kDefaultDescentShare;
    apply_search_settings(o.search_settings, &settings, &descent_share);
    // One search from `from` with ms milliseconds (timed) or n simulations; `warm`: an
    // annealing starts at kWarmStartTemperature (descent ignores it).
    auto run_from = [&](const char* method, const Placement& from, double ms, int64_t n,
                        bool warm) {
      PlacerOptions a = sub_options(o);
      a.initial = from;
      if (by_time) {
        a.time_ms = std::max(1e-3, ms);
      } else {
        a.budget = std::max<int64_t>(1, n);
      }
      if (warm) a.anneal_t_start = kWarmStartTemperature;
      PlacerStats st;
      a.stats = &st;
      Placement p = make_placer(method, a)->place(g, c, a);
      sims += st.simulations;
      return p;
    };
    Placement best = search_start(g, c, o, "auto");
    std::string phases;
    // Whether a phase before the annealing has shortened the start (or its overflow).
    bool improved = false;
    // A phase from the best so far with `share` of what is left.
    auto run_phase = [&](const char* method, double share) {
      Placement p = run_from(method, best, share * left_ms(),
                             static_cast<int64_t>(share * left_sims()), improved);
      if (!improved) improved = p.device != best.device;
      best = std::move(p);
      phases += phases.empty() ? method : std::string(", then ") + method;
    };
    // Steepest descent first, with up to descent_share of the time: it stops at a local optimum,
    // often well before, and where annealing's walk is too hot for the time given (ptb and nmt
    // at 4 and 8 devices) it is the better search by far.  It runs before the learned search,
    // from the best fast placement, so that it reaches the local optimum a plain descent
    // reaches (kDescentFirstShareWithScorer).
    if (descent_share > 0 && has_left(kMinAnnealMs, kMinAnnealSims))
      run_phase("descent", descent_share);
    if (loaded_) {
      // The slices compare with the start's score; without a scorer nothing needs it.
      double best_score = search_score(simulate_once(g, c, best), c);
      const double slice_ms = left_ms() / kSlices;
      const int64_t slice_sims = std::max<int64_t>(1, left_sims() / kSlices);
      // The least a learned slice must gain (relative) to earn the next one: kMinGain, then
      // also what the chain-anneal probe gained in a slice.
      double min_gain = kMinGain;
      bool probed = false;
      int learned_slices = 0, probe_after = 0;  // for the note
      for (int k = 0; k < kSlices && has_left(slice_ms / 4, slice_sims / 4); ++k) {
        LearnedSearchOptions lo = settings;
        lo.seed = derive_seed(static_cast<uint64_t>(o.seed), static_cast<uint64_t>(k));
        if (by_time) {
          lo.time_ms = std::min(slice_ms, left_ms());
        } else {
          lo.budget = std::min(slice_sims, left_sims());
        }
        LearnedSearchStats st;
        Placement p = learned_search(g, c, best, &loaded_->scorer, lo, &st);
        sims += st.simulations;
        // A slice must shorten the step by min_gain to earn the next one (any improvement of
        // the overflow counts while nothing fits: those scores are above 2^50).
        const bool fits = best_score < 0x1p50;
        const bool gained = fits ? st.best_score < best_score * (1 - min_gain)
                                 : score_improves(st.best_score, best_score);
        if (!gained) {
          if (score_improves(st.best_score, best_score)) {
            best = std::move(p);
            best_score = st.best_score;
            improved = true;
          }
          learned_slices = k + 1;
          break;
        }
        const double learned_gain = fits ? 1 - st.best_score / best_score : 0;
        best = std::move(p);
        best_score = st.best_score;
        improved = true;
        learned_slices = k + 1;
        // After the first slice that gains, one slice of chain-anneal from its result: the
        // annealing's rate, measured on this graph at this point.  The learned search goes on
        // only while each slice gains more than that slice of annealing did.
        if (fits && !probed && has_left(slice_ms / 4, slice_sims / 4)) {
          probed = true;
          Placement q = run_from("chain-anneal", best, std::min(slice_ms, left_ms()),
                                 std::min(slice_sims, left_sims()), true);
          const double q_score = search_score(simulate_once(g, c, q), c);
          const double anneal_gain = 1 - q_score / best_score;
          if (score_improves(q_score, best_score)) {
            best = std::move(q);
            best_score = q_score;
          }
          probe_after = k + 1;
          if (anneal_gain >= learned_gain) break;
          min_gain = std::max(min_gain, anneal_gain);
        }
      }
      if (learned_slices > 0) {
        phases += phases.empty() ? "" : ", then ";
        phases +=
            "learned search " + std::to_string(learned_slices) + "/" + std::to_string(kSlices);
        if (probe_after > 0)
          phases += " (chain-anneal probe after " + std::to_string(probe_after) + ")";
      }
    }
    // Then chain-anneal from the best so far (it returns the best it saw, so it cannot undo the
    // earlier phases).
    // chain-anneal ends at the time given, or spends the budget: no time is left after it.
    // (A descent after it ran while timed anneal could end early, before 2c48ced.)
    if (has_left(kMinAnnealMs, kMinAnnealSims)) run_phase("chain-anneal", 1.0);
    if (o.stats) {
      o.stats->simulations = sims;
      o.stats->budget = o.budget;
      add_note(o.stats, phases);  // after search_start's note, if it left one
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

void apply_search_settings(const std::vector<std::string>& settings, LearnedSearchOptions* o,
                           double* descent_share) {
  for (const std::string& kv : settings) {
    const size_t eq = kv.find('=');
    const std::string key = kv.substr(0, eq);
    double* field = key == "group_share"     ? &o->group_share
                    : key == "segment_share" ? &o->segment_share
                    : key == "swap_share"    ? &o->swap_share
                    : key == "descent_share" ? descent_share
                                             : nullptr;
    if (eq == std::string::npos || field == nullptr)
      throw InputError("--search-set '" + kv +
                       "': expected key=value with key group_share, segment_share, swap_share "
                       "or (auto only) descent_share");
    const std::string text = kv.substr(eq + 1);
    char* end = nullptr;
    const double v = std::strtod(text.c_str(), &end);
    if (text.empty() || *end != '\0' || !(v >= 0 && v <= 1))
      throw InputError("--search-set '" + kv + "': " + key + " must be a number in [0, 1]");
    *field = v;
  }
  if (o->group_share + o->segment_share + o->swap_share > 1 + 1e-12)
    throw InputError(
        "--search-set: group_share + segment_share + swap_share must be at most 1 "
        "(got " +
        std::to_string(o->group_share) + " + " + std::to_string(o->segment_share) + " + " +
        std::to_string(o->swap_share) + "; the learned-search placers start from group_share=0.3)");
}

std::string default_model_path() {
  const char* env = std::getenv("PLACETO_DEFAULT_MODEL");
  if (env != nullptr && *env != '\0') return env;
  return std::string(PLACETO_SOURCE_DIR) + "/models/default.h5";
}

std::string scorer_checkpoint_or_default(const std::string& checkpoint) {
  if (!checkpoint.empty()) return checkpoint;
  const std::string path = default_model_path();
  if (!std::filesystem::exists(path))
    throw InputError("no --checkpoint given, and the default model " + path +
                     " does not exist (pass --checkpoint, set PLACETO_DEFAULT_MODEL, or give "
                     "auto --checkpoint none)");
  return path;
}

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

namespace {
// policy-search and scorer-greedy: the checkpoint or the default; never "none".
std::string learned_checkpoint(const char* method, const std::string& checkpoint) {
  if (checkpoint == "none")
    throw InputError(std::string("--checkpoint none: ") + method +
                     " needs a model (only auto runs without one)");
  return scorer_checkpoint_or_default(checkpoint);
}
}  // namespace

void register_learned_search_placers() {
  if (find_placer("policy-search")) return;
  PlacerInfo greedy;
  greedy.name = "scorer-greedy";
  greedy.summary =
      "learned greedy improvement: the best fast placement walked by the improving moves a "
      "learned-search checkpoint ranks first (--checkpoint)";
  greedy.kind = PlacerKind::kLearned;
  greedy.takes_budget = true;
  greedy.accepts_checkpoint = true;
  greedy.make = [](const PlacerOptions& o) -> std::unique_ptr<Placer> {
    return std::make_unique<LearnedPlacer>(
        "scorer-greedy", load_scorer(learned_checkpoint("scorer-greedy", o.checkpoint)), true);
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
  ps.accepts_checkpoint = true;
  ps.make = [](const PlacerOptions& o) -> std::unique_ptr<Placer> {
    return std::make_unique<LearnedPlacer>(
        "policy-search", load_scorer(learned_checkpoint("policy-search", o.checkpoint)), false);
  };
  register_placer(ps);
  PlacerInfo au;
  au.name = "auto";
  au.summary =
      "the fast placers; then, at up to 4 devices, descent; then policy-search (the default "
      "model, --checkpoint, or none) while it improves; then chain-anneal for the rest "
      "of --time-ms (default 100) or --budget: never worse than 'best'";
  au.kind = PlacerKind::kSearch;
  au.stochastic = true;
  au.takes_budget = true;
  au.accepts_checkpoint = true;
  au.make = [](const PlacerOptions& o) -> std::unique_ptr<Placer> {
    std::optional<LoadedScorer> s;
    if (o.checkpoint != "none") s = load_scorer(scorer_checkpoint_or_default(o.checkpoint));
    return std::make_unique<AutoPlacer>(std::move(s));
  };
  register_placer(au);
}

}  // namespace placeto
