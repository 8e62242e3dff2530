// The one evaluation protocol: given graphs, a cluster, methods and their budgets, it places
// every graph with every method and returns one table -- runtime, peak memory, feasibility,
// placement time, lower bound, and the ratios to the best classical placer, to the lower
// bound and to `single`.  `placeto compare`, `placeto eval`, the trainer's periodic evaluation
// and the "best" placer (placer:best) all judge placements through it.
//
// "Best classical" has one rule, better_placement(), the memory rule of memory_rule.h: a
// feasible placement beats an infeasible one, between infeasible ones the smaller overflow
// wins (largest relative overflow, then total), then the lower simulated runtime wins, and a
// tie goes to the method that comes first in the registry.  It is taken over every fast placer of
// the registry (not only the methods a command lists), run with the caller's seed, so that every
// report's ratio to it means the same thing.  When no fast placer fits in memory, the best
// classical placement is the least-overflowing infeasible one and is reported as infeasible.
//
// Threading: free functions; each call builds its own simulators and placers.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "sim/cluster.h"
#include "sim/graph_set.h"
#include "sim/placers/evaluation.h"
#include "sim/placers/placer.h"

namespace placeto {

// The rule above, for two placements of one graph: true when `a` is strictly better.
// REQUIRES: both evaluated on the same cluster (evaluate_placement fills `overflow`).
bool better_placement(const PlacementEvaluation& a, const PlacementEvaluation& b);

// What every placement of a graph is compared with.
struct ClassicalReference {
  std::vector<PlacerRun> runs;  // every fast placer, registry order
  int best = 0;                 // index into runs of the best classical placement
  int single = 0;               // index into runs of `single`
  double place_ms = 0;          // all fast placers together
  double lower_bound_us = 0;
  const PlacerRun& best_run() const { return runs[best]; }
  const PlacerRun& single_run() const { return runs[single]; }
};
// `skip`: fast placers left out (search_start's large timed graphs).
ClassicalReference classical_reference(const Graph& graph, const Cluster& cluster,
                                       const PlacerOptions& options,
                                       const std::vector<std::string>& skip = {});

// One row of a table.
struct MethodSpec {
  MethodSpec() = default;
  MethodSpec(std::string row_label, std::string method_name)
      : label(std::move(row_label)), method(std::move(method_name)) {}
  std::string label;   // the row's name ("policy-best-of-8"); empty = the method's name
  std::string method;  // registry name; "best" gives the best-classical row of the reference
  // Overrides of the protocol's options for this row (0 = keep them).
  int64_t budget = 0;
  double time_ms = 0;
  int samples = 0;
  std::string checkpoint;  // this row's model (e.g. a scorer next to a policy's rows)
  // The label of an earlier row: this row's time_ms is that row's place_ms on the same graph
  // (equal-time comparisons).
  std::string match_time_of;
  std::string note;  // shown in the note column (after the effort a search reports)
};

struct ProtocolRow {
  std::string graph, label, method;
  Placement placement;
  PlacementEvaluation eval;  // runtime, memory, feasible, lower bound, ratio_to_lb
  double place_ms = 0;       // the whole place() call: features, forward passes, simulations
  double ratio_to_best_classical = 0;
  double ratio_to_single = 0;
  bool loses_to_single = false;
  std::string note;
};

struct GraphResult {
  std::string graph;
  ClassicalReference reference;
  std::vector<ProtocolRow> rows;  // one per spec, in order; then "lower-bound" if asked
};

struct ProtocolOptions {
  PlacerOptions placer;          // seed, samples, checkpoint, ... for every row
  bool lower_bound_row = false;  // append a "lower-bound" pseudo-row per graph
  // Called after each row with (rows done, rows in all, graph name).
  std::function<void(int64_t, int64_t, const std::string&)> on_row;
};

// Checks every spec's method name (InputError with "did you mean") before any work.
void validate_specs(const std::vector<MethodSpec>& specs);

std::vector<GraphResult> run_protocol(const std::vector<NamedGraph>& graphs, const Cluster& cluster,
                                      const std::vector<MethodSpec>& specs,
                                      const ProtocolOptions& options);

// The table as CSV: graph,method,devices,runtime_us,peak_mem_bytes_max,feasible,place_ms,
// lower_bound_us,ratio_to_lb,ratio_to_best_classical,ratio_to_single,loses_to_single,note.
std::string protocol_csv(const std::vector<GraphResult>& results, int devices);

// Per row label: graphs, geometric means over feasible placements of the ratios to the best
// classical placer (graphs where it is feasible), to the lower bound and to single, mean
// place ms, infeasible count and losses to single.  Then every loss to single, by graph.
std::string protocol_summary(const std::vector<GraphResult>& results);

}  // namespace placeto
