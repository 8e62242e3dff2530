#include "sim/placers/protocol.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>

#include "common/error.h"
#include "sim/placers/registry.h"

namespace placeto {
namespace {

constexpr const char* kBest = "best";
constexpr const char* kLowerBoundRow = "lower-bound";

// The options a method is built and run with: the protocol's, less what it does not take.
PlacerOptions options_for(const PlacerInfo& info, PlacerOptions o) {
  if (!info.needs_checkpoint && !info.accepts_checkpoint) o.checkpoint.clear();
  if (!info.takes_start) o.initial.reset();
  if (!info.takes_budget) o.budget = 0, o.time_ms = 0;
  return o;
}

// "a; b", leaving out the empty ones.
std::string join_notes(const std::string& a, const std::string& b) {
  if (a.empty() || b.empty()) return a + b;
  return a + "; " + b;
}

std::string label_of(const MethodSpec& s) { return s.label.empty() ? s.method : s.label; }

std::string number(double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.10g", x);
  return buf;
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += (c == '"') ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

void fill_ratios(const ClassicalReference& ref, ProtocolRow* r) {
  const double best = ref.best_run().evaluation.runtime_us;
  const double single = ref.single_run().evaluation.runtime_us;
  r->ratio_to_best_classical = best > 0 ? r->eval.runtime_us / best : 0;
  r->ratio_to_single = single > 0 ? r->eval.runtime_us / single : 0;
  // A relative tolerance keeps equal schedules (summed in another order) from counting.
  r->loses_to_single = r->eval.runtime_us > single * (1 + 1e-12);
}

}  // namespace

bool better_placement(const PlacementEvaluation& a, const PlacementEvaluation& b) {
  PLACETO_CHECK_EQ(a.feasible, a.overflow.fits());
  PLACETO_CHECK_EQ(b.feasible, b.overflow.fits());
  return better_under_memory_rule(a.overflow, a.runtime_us, b.overflow, b.runtime_us);
}

ClassicalReference classical_reference(const Graph& g, const Cluster& c,
                                       const PlacerOptions& options,
                                       const std::vector<std::string>& skip) {
  ClassicalReference ref;
  ref.lower_bound_us = runtime_lower_bound_us(g, c);
  for (const std::string& name : fast_placer_names()) {
    if (std::find(skip.begin(), skip.end(), name) != skip.end()) continue;
    const PlacerInfo& info = placer_info(name);
    const PlacerOptions o = options_for(info, options);
    ref.runs.push_back(run_placer(*info.make(o), g, c, o));
    ref.place_ms += ref.runs.back().place_ms;
    const int i = static_cast<int>(ref.runs.size()) - 1;
    if (name == "single") ref.single = i;
    // Strictly better only: a tie keeps the method earlier in the registry.
    if (i > 0 && better_placement(ref.runs[i].evaluation, ref.runs[ref.best].evaluation))
      ref.best = i;
  }
  PLACETO_CHECK(!ref.runs.empty());
  PLACETO_CHECK_EQ(ref.runs[ref.single].method, std::string("single"));
  return ref;
}

Placement best_fast_placement(const Graph& g, const Cluster& c, const PlacerOptions& options,
                              const std::vector<std::string>& skip) {
  PlacerOptions o = options;
  o.stats = nullptr;
  return classical_reference(g, c, o, skip).best_run().placement;
}

void validate_specs(const std::vector<MethodSpec>& specs) {
  std::vector<std::string> labels;
  for (const MethodSpec& s : specs) {
    placer_info(s.method);  // unknown names: "did you mean"
    const std::string label = label_of(s);
    for (const auto& l : labels)
      if (l == label) throw InputError("method '" + label + "' is listed twice");
    if (!s.match_time_of.empty() &&
        std::find(labels.begin(), labels.end(), s.match_time_of) == labels.end())
      throw InputError("row '" + label + "' takes its time from '" + s.match_time_of +
                       "', which is not an earlier row");
    labels.push_back(label);
  }
}

std::vector<GraphResult> run_protocol(const std::vector<NamedGraph>& graphs, const Cluster& c,
                                      const std::vector<MethodSpec>& specs,
                                      const ProtocolOptions& options) {
  validate_specs(specs);
  // Each (method, checkpoint) is built once (a learned placer loads its checkpoint here, not
  // per graph).
  auto row_options = [&](const MethodSpec& s, const PlacerInfo& info) {
    PlacerOptions o = options.placer;
    if (!s.checkpoint.empty()) o.checkpoint = s.checkpoint;
    return options_for(info, o);
  };
  std::map<std::pair<std::string, std::string>, std::unique_ptr<Placer>> placers;
  auto key = [](const MethodSpec& s, const PlacerOptions& o) {
    return std::make_pair(s.method, o.checkpoint);
  };
  for (const MethodSpec& s : specs) {
    if (s.method == kBest) continue;
    const PlacerInfo& info = placer_info(s.method);
    const PlacerOptions o = row_options(s, info);
    if (placers.count(key(s, o))) continue;
    validate_options(info, o, s.method);
    placers[key(s, o)] = info.make(o);
  }
  const int64_t total = static_cast<int64_t>(graphs.size() * specs.size());
  int64_t done = 0;
  std::vector<GraphResult> results;
  for (const NamedGraph& ng : graphs) {
    GraphResult res;
    res.graph = ng.name;
    res.reference = classical_reference(ng.graph, c, options.placer);
    const ClassicalReference& ref = res.reference;
    for (const MethodSpec& s : specs) {
      ProtocolRow row;
      row.graph = ng.name;
      row.label = label_of(s);
      row.method = s.method;
      const PlacerInfo& info = placer_info(s.method);
      const bool overridden = s.budget || s.time_ms || s.samples || !s.match_time_of.empty();
      std::string effort;
      if (s.method == kBest) {
        const PlacerRun& best = ref.best_run();
        row.placement = best.placement;
        row.eval = best.evaluation;
        row.place_ms = ref.place_ms;
        effort = best.method;
      } else if (info.kind == PlacerKind::kFast && !overridden) {
        const PlacerRun* run = nullptr;
        for (const PlacerRun& r : ref.runs)
          if (r.method == s.method) run = &r;
        PLACETO_CHECK(run != nullptr);
        row.placement = run->placement;
        row.eval = run->evaluation;
        row.place_ms = run->place_ms;
        effort = join_notes(run->note, run->message);
      } else {
        PlacerOptions o = row_options(s, info);
        if (s.budget) o.budget = s.budget, o.time_ms = 0;
        if (s.time_ms) o.time_ms = s.time_ms, o.budget = 0;
        if (s.samples) o.samples = s.samples;
        if (!s.match_time_of.empty()) {
          for (const ProtocolRow& r : res.rows)
            if (r.label == s.match_time_of) o.time_ms = std::max(r.place_ms, 1e-3);
          o.budget = 0;
        }
        PlacerStats stats;
        o.stats = &stats;
        PlacerRun run = run_placer(*placers.at(key(s, o)), ng.graph, c, o);
        row.placement = std::move(run.placement);
        row.eval = run.evaluation;
        row.place_ms = run.place_ms;
        if (stats.simulations > 0) effort = std::to_string(stats.simulations) + " simulations";
        effort = join_notes(join_notes(effort, run.note), run.message);
      }
      row.note = join_notes(effort, s.note);
      fill_ratios(ref, &row);
      res.rows.push_back(std::move(row));
      if (options.on_row) options.on_row(++done, total, ng.name);
    }
    if (options.lower_bound_row) {
      ProtocolRow lb;
      lb.graph = ng.name;
      lb.label = lb.method = kLowerBoundRow;
      lb.eval.runtime_us = lb.eval.lower_bound_us = ref.lower_bound_us;
      lb.eval.ratio_to_lb = 1;
      lb.note = "max(total cost / D, critical path)";
      fill_ratios(ref, &lb);
      lb.loses_to_single = false;
      res.rows.push_back(std::move(lb));
    }
    results.push_back(std::move(res));
  }
  return results;
}

std::string protocol_csv(const std::vector<GraphResult>& results, int devices) {
  std::string out =
      "graph,method,devices,runtime_us,peak_mem_bytes_max,feasible,place_ms,lower_bound_us,"
      "ratio_to_lb,ratio_to_best_classical,ratio_to_single,loses_to_single,note\n";
  for (const GraphResult& g : results)
    for (const ProtocolRow& r : g.rows)
      out += csv_field(r.graph) + ',' + csv_field(r.label) + ',' + std::to_string(devices) + ',' +
             number(r.eval.runtime_us) + ',' + std::to_string(r.eval.peak_mem_bytes_max) + ',' +
             (r.eval.feasible ? "true" : "false") + ',' + number(r.place_ms) + ',' +
             number(r.eval.lower_bound_us) + ',' + number(r.eval.ratio_to_lb) + ',' +
             number(r.ratio_to_best_classical) + ',' + number(r.ratio_to_single) + ',' +
             (r.loses_to_single ? "true" : "false") + ',' + csv_field(r.note) + '\n';
  return out;
}

std::string protocol_summary(const std::vector<GraphResult>& results) {
  struct Agg {
    int graphs = 0, infeasible = 0, losses = 0, n_best = 0, n = 0;
    double log_best = 0, log_lb = 0, log_single = 0, ms = 0;
  };
  std::vector<std::string> order;
  std::map<std::string, Agg> agg;
  for (const GraphResult& g : results) {
    const bool best_ok = g.reference.best_run().evaluation.feasible;
    for (const ProtocolRow& r : g.rows) {
      if (!agg.count(r.label)) order.push_back(r.label);
      Agg& a = agg[r.label];
      ++a.graphs;
      a.ms += r.place_ms;
      a.losses += r.loses_to_single ? 1 : 0;
      if (!r.eval.feasible) {
        ++a.infeasible;  // never averaged in as a fast run
        continue;
      }
      if (best_ok && r.ratio_to_best_classical > 0) {
        a.log_best += std::log(r.ratio_to_best_classical);
        ++a.n_best;
      }
      a.log_lb += std::log(r.eval.ratio_to_lb > 0 ? r.eval.ratio_to_lb : 1.0);
      a.log_single += std::log(r.ratio_to_single > 0 ? r.ratio_to_single : 1.0);
      ++a.n;
    }
  }
  auto gmean = [](double log_sum, int n) { return n ? std::exp(log_sum / n) : NAN; };
  char buf[256];
  std::snprintf(buf, sizeof buf, "%-20s %6s %12s %12s %12s %10s %10s %8s\n", "method", "graphs",
                "vs best-cl.", "vs lower bd", "vs single", "place ms", "infeasible", "loses");
  std::string out = buf;
  for (const std::string& m : order) {
    const Agg& a = agg[m];
    std::snprintf(buf, sizeof buf, "%-20s %6d %12.4f %12.4f %12.4f %10.2f %10d %8d\n", m.c_str(),
                  a.graphs, gmean(a.log_best, a.n_best), gmean(a.log_lb, a.n),
                  gmean(a.log_single, a.n), a.graphs ? a.ms / a.graphs : 0.0, a.infeasible,
                  a.losses);
    out += buf;
  }
  out +=
      "(geometric means over feasible placements; vs best-cl. < 1 beats the best classical "
      "placer, the best of the fast placers: feasible first, then fastest)\n";
  bool header = false;
  for (const GraphResult& g : results)
    for (const ProtocolRow& r : g.rows) {
      if (!r.loses_to_single || r.method == kBest) continue;
      if (!header) out += "\nLosses to single (runtime above the single-device placement's):\n";
      header = true;
      std::snprintf(buf, sizeof buf, "  %s: %s is %.4fx single\n", r.graph.c_str(), r.label.c_str(),
                    r.ratio_to_single);
      out += buf;
    }
  for (const GraphResult& g : results)
    for (const ProtocolRow& r : g.rows)
      if (r.method == kBest && r.loses_to_single)
        out += "  " + r.graph + ": even the best classical placer (" +
               g.reference.best_run().method + ") loses to single\n";
  return out;
}

}  // namespace placeto
