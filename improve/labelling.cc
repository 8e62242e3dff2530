#include "improve/labelling.h"

#include <algorithm>
#include <cmath>

#include "common/rng.h"
#include "improve/what_if.h"
#include "sim/families/family.h"
#include "sim/graph_io.h"
#include "sim/placers/registry.h"
#include "sim/placers/search_util.h"
#include "sim/simulator.h"

namespace placeto {

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
      follow->score(features.data(), p, logits.data(), WhatIf::kNumFeatures);
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

std::vector<LabelJob> label_jobs(const ScorerTrainConfig& cfg,
                                 const std::vector<int>& cluster_devices) {
  const int num_clusters = static_cast<int>(cluster_devices.size());
  std::vector<LabelJob> jobs;
  for (const std::string& fam : cfg.families)
    for (int gi = 0; gi < cfg.graphs; ++gi)
      for (int ci = 0; ci < num_clusters; ++ci)
        for (int s = 0; s < cfg.starts; ++s) jobs.push_back({fam, gi, ci, s});
  for (int gi = 0; gi < static_cast<int>(cfg.graph_files.size()); ++gi)
    for (int ci = 0; ci < num_clusters; ++ci)
      if (cfg.graph_files_max_devices == 0 || cluster_devices[ci] <= cfg.graph_files_max_devices)
        for (int s = 0; s < cfg.starts; ++s) jobs.push_back({kGraphFileJob, gi, ci, s});
  return jobs;
}

Graph label_job_graph(const ScorerTrainConfig& cfg, const LabelJob& j) {
  if (j.family == kGraphFileJob)
    return load_graph(cfg.graph_files.at(static_cast<size_t>(j.graph)));
  const FamilySpec spec = resolve_family_spec(default_family_spec(j.family));
  return generate_graph(spec, j.graph, static_cast<uint64_t>(cfg.graph_seed));
}

Placement label_job_start(const ScorerTrainConfig& cfg, const LabelJob& j, size_t k, const Graph& g,
                          const Cluster& c) {
  PlacerOptions po;
  po.seed = cfg.seed;
  Placement start = best_fast_placement(g, c, po);
  if (j.start > 0) {
    Rng rng(derive_seed(static_cast<uint64_t>(cfg.seed), k));
    for (auto& d : start.device)
      if (rng.uniform01() < cfg.perturb) d = static_cast<int32_t>(rng.below(c.num_devices()));
  }
  return start;
}

}  // namespace placeto
