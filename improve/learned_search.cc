#include "improve/learned_search.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <numeric>

#include "common/error.h"
#include "common/rng.h"
#include "sim/placers/search.h"
#include "sim/simulator.h"

namespace placeto {
namespace {

double gumbel(Rng& rng) {
  const double u = std::max(1e-300, rng.uniform01());
  return -std::log(-std::log(std::max(1e-300, std::min(u, 1.0 - 1e-16))));
}

double elapsed_ms(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - since)
      .count();
}

}  // namespace

Placement learned_search(const Graph& g, const Cluster& c, const Placement& start,
                         MoveScorer* scorer, const LearnedSearchOptions& o,
                         LearnedSearchStats* stats) {
  const auto t_call = std::chrono::steady_clock::now();
  const int n = g.num_nodes();
  const int num_dev = c.num_devices();
  LearnedSearchStats st;
  Simulator sim(g, c);
  Placement current = start;
  double current_score = search_score(sim.simulate(current), c);
  Placement best = current;
  double best_score = current_score;
  st.start_score = st.best_score = current_score;
  if (num_dev == 1 || n == 0) {
    if (stats) *stats = st;
    return best;
  }
  const bool timed = o.time_ms > 0;
  const int64_t budget = o.budget > 0 ? o.budget : (o.greedy ? 20LL * n : 2000);
  Rng rng(o.seed);
  WhatIf what_if(g, c);
  std::vector<float> features, logits;
  std::vector<Move> moves;
  std::vector<int32_t> order;
  std::vector<double> keys;
  std::vector<char> tried;
  size_t next = 0;
  int fails = 0, since_refresh = 0;
  auto refresh = [&] {
    what_if.compute(sim, current, &features, &moves);
    const size_t p = moves.size();
    logits.assign(p, 0.0f);
    if (scorer) scorer->score(features.data(), p, logits.data());
    keys.resize(p);
    for (size_t i = 0; i < p; ++i)
      keys[i] = (o.greedy && scorer) ? logits[i] : logits[i] / o.sample_temperature + gumbel(rng);
    order.resize(p);
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
      return keys[a] > keys[b] || (keys[a] == keys[b] && a < b);
    });
    tried.assign(p, 0);
    next = 0;
    fails = 0;
    since_refresh = 0;
    ++st.refreshes;
  };
  refresh();
  const double t0 = o.t_start_times_devices / c.num_devices() * st.start_score,
               t1 = o.t_end * st.start_score;
  const int batch = std::max(1, o.batch);
  while (true) {
    const double spent = timed ? elapsed_ms(t_call) / o.time_ms
                               : static_cast<double>(st.simulations) / static_cast<double>(budget);
    if (spent >= 1.0) break;
    const double temperature = t0 * std::pow(t1 / t0, spent);
    // Draw up to `batch` candidates, simulating each; the best of them is the proposal.
    const size_t p = moves.size();
    Move chosen{-1, -1};
    double chosen_score = std::numeric_limits<double>::infinity();
    bool chosen_is_last = false, exhausted = false;
    int drawn = 0;
    while (drawn < batch) {
      size_t pick;
      if (!o.greedy && o.epsilon > 0 && rng.uniform01() < o.epsilon) {
        pick = static_cast<size_t>(rng.below(static_cast<int64_t>(p)));
      } else {
        while (next < p && tried[order[next]]) ++next;
        if (next == p) {
          exhausted = true;
          break;
        }
        pick = static_cast<size_t>(order[next++]);
      }
      tried[pick] = 1;
      const Move m = moves[pick];
      if (current.device[m.op] == m.device) continue;  // a no-op since the ranking was made
      const int32_t old = current.device[m.op];
      current.device[m.op] = m.device;
      const double s = search_score(sim.simulate(current), c);
      current.device[m.op] = old;
      ++st.simulations;
      ++drawn;
      chosen_is_last = s < chosen_score;
      if (chosen_is_last) {
        chosen = m;
        chosen_score = s;
      }
    }
    if (chosen.op < 0) {
      if (o.greedy) break;  // every move of this state failed: a local optimum
      refresh();            // fresh noise, same state
      continue;
    }
    const bool accept = chosen_score < current_score * (1 - 1e-12) ||
                        (!o.greedy && rng.uniform01() < std::exp(-(chosen_score - current_score) /
                                                                 std::max(1e-300, temperature)));
    if (accept) {
      current.device[chosen.op] = chosen.device;
      current_score = chosen_score;
      ++st.accepted;
      if (chosen_score < best_score) {
        best_score = chosen_score;
        best = current;
      }
      fails = 0;
      // Refresh the ranking from the new state's schedule, or keep walking the old ranking
      // for a few more accepted moves.
      if (++since_refresh >= std::max(1, o.refresh_every)) {
        if (!chosen_is_last) {
          sim.simulate(current);
          ++st.simulations;
        }
        refresh();
      }
    } else {
      fails += drawn;
      if (o.greedy && (fails >= o.greedy_tries || exhausted)) break;
    }
  }
  st.best_score = best_score;
  if (stats) *stats = st;
  return best;
}

}  // namespace placeto
