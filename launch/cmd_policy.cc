// The commands that need LibTorch: `placeto train` (single-process training), `placeto eval`
// (zero-shot placement of a directory of graphs by a checkpoint, next to every classical
// placer), and `placeto place --method policy`.
#include <torch/torch.h>

#include <cmath>
#include <cstdio>
#include <iostream>
#include <map>
#include <memory>

#include "common/error.h"
#include "common/files.h"
#include "common/progress.h"
#include "launch/commands.h"
#include "learner/collective.h"
#include "learner/graph_set.h"
#include "learner/policy_io.h"
#include "learner/training_run.h"
#include "sim/graph_io.h"
#include "sim/placers/evaluation.h"
#include "sim/placers/placer.h"

namespace placeto {

Placement place_graph_with_policy(const std::string& checkpoint, const Graph& g, const Cluster& c,
                                  int samples, int64_t seed, double* place_ms) {
  torch::set_num_threads(1);
  LoadedPolicy policy = load_policy(checkpoint);
  PolicyPlacement pp = place_with_policy(policy, g, c, samples, static_cast<uint64_t>(seed));
  *place_ms = pp.seconds * 1000.0;
  return pp.placement;
}

namespace {

struct EvalArgs {
  std::string checkpoint, graphs, split = "test", cluster, out, placements, methods;
  int devices = 0;
  int samples = 8;
  int64_t seed = 1;
  int64_t anneal_budget = 2000;
};

struct Row {
  std::string graph, method;
  double runtime_us = 0, place_ms = 0, lb = 0;
  bool feasible = true;
  std::string note;
};

void run_eval(const EvalArgs& a) {
  check_output_path(a.out, {a.checkpoint, a.cluster});
  torch::set_num_threads(1);
  LoadedPolicy policy = load_policy(a.checkpoint);
  Cluster cluster;
  if (!a.cluster.empty()) {
    cluster = load_cluster(a.cluster);
  } else {
    cluster = default_cluster(a.devices > 0 ? a.devices : policy.config.devices);
  }
  if (a.devices > 0 && a.devices != cluster.num_devices())
    throw InputError("--devices " + std::to_string(a.devices) + " contradicts " + a.cluster);
  if (cluster.num_devices() != policy.config.devices)
    throw InputError(policy.path + ": the policy was trained for " +
                     std::to_string(policy.config.devices) + " devices, but evaluation asks for " +
                     std::to_string(cluster.num_devices()));
  std::vector<std::string> methods = fast_placer_names();
  if (!a.methods.empty()) {
    methods.clear();
    std::string cur;
    for (char ch : a.methods + ",") {
      if (ch == ',') {
        if (!cur.empty()) {
          make_placer(cur);  // validates the name
          methods.push_back(cur);
        }
        cur.clear();
      } else {
        cur += ch;
      }
    }
  }
  std::vector<NamedGraph> graphs = load_graph_split(a.graphs, a.split);
  if (!a.placements.empty()) make_directories(a.placements);
  std::vector<Row> rows;
  ProgressLine progress("eval", static_cast<int64_t>(graphs.size()), "graphs", 2.0);
  for (size_t gi = 0; gi < graphs.size(); ++gi) {
    const NamedGraph& ng = graphs[gi];
    const double lb = runtime_lower_bound_us(ng.graph, cluster);
    auto save = [&](const std::string& method, const Placement& p) {
      if (!a.placements.empty())
        save_placement(ng.graph, p, a.placements + "/" + ng.name + "." + method + ".json");
    };
    auto add = [&](const std::string& method, const Placement& p, double ms, std::string note) {
      PlacementEvaluation e = evaluate_placement(ng.graph, cluster, p);
      rows.push_back({ng.name, method, e.runtime_us, ms, lb, e.feasible, std::move(note)});
      save(method, p);
    };
    // The policy: greedy, then the best of k samples (greedy included).
    PolicyPlacement greedy = place_with_policy(policy, ng.graph, cluster, 1, a.seed);
    add("policy-greedy", greedy.placement, greedy.seconds * 1000, "");
    PolicyPlacement best = place_with_policy(policy, ng.graph, cluster, a.samples, a.seed);
    add("policy-best-of-" + std::to_string(a.samples), best.placement, best.seconds * 1000, "");
    // Classical placers and the best of them.
    PlacerOptions po;
    po.seed = a.seed;
    const Row* best_classical = nullptr;
    size_t first_classical = rows.size();
    double classical_ms = 0;
    for (const auto& m : methods) {
      PlacerRun run = run_placer(*make_placer(m), ng.graph, cluster, po);
      rows.push_back({ng.name, m, run.evaluation.runtime_us, run.place_ms, lb,
                      run.evaluation.feasible, run.message});
      save(m, run.placement);
      classical_ms += run.place_ms;
    }
    for (size_t i = first_classical; i < rows.size(); ++i)
      if (rows[i].feasible && (!best_classical || rows[i].runtime_us < best_classical->runtime_us))
        best_classical = &rows[i];
    if (best_classical) {
      Row r = *best_classical;
      r.note = r.method;
      r.method = "best-classical";
      r.place_ms = classical_ms;
      rows.push_back(r);
    } else {
      rows.push_back(
          {ng.name, "best-classical", 0, classical_ms, lb, false, "no feasible placement"});
    }
    PlacerOptions ao = po;
    ao.budget = a.anneal_budget;
    PlacerRun ann = run_placer(*make_placer("anneal"), ng.graph, cluster, ao);
    rows.push_back({ng.name, "anneal", ann.evaluation.runtime_us, ann.place_ms, lb,
                    ann.evaluation.feasible, "best-known"});
    save("anneal", ann.placement);
    // Search at placement time seeded by the policy: anneal with the same budget, started
    // from the best-of-k policy placement instead of the best fast placer's.
    PlacerOptions so = ao;
    so.initial = best.placement;
    PlacerRun seeded = run_placer(*make_placer("anneal"), ng.graph, cluster, so);
    rows.push_back({ng.name, "policy+anneal", seeded.evaluation.runtime_us,
                    best.seconds * 1000 + seeded.place_ms, lb, seeded.evaluation.feasible,
                    "anneal from policy-best-of-" + std::to_string(a.samples)});
    save("policy+anneal", seeded.placement);
    // anneal at policy+anneal's time: its budget (which sizes its cooling schedule, so the
    // schedule completes) scaled by the ratio of the two times, as measured just above.
    // Equal time, not equal simulations: the fair comparison for a user with a deadline.
    const double seeded_ms = best.seconds * 1000 + seeded.place_ms;
    PlacerOptions eo = po;
    eo.budget = std::max<int64_t>(
        1, static_cast<int64_t>(std::llround(static_cast<double>(a.anneal_budget) * seeded_ms /
                                             std::max(ann.place_ms, 1e-3))));
    PlacerRun equal = run_placer(*make_placer("anneal"), ng.graph, cluster, eo);
    rows.push_back({ng.name, "anneal-equal-time", equal.evaluation.runtime_us, equal.place_ms, lb,
                    equal.evaluation.feasible,
                    std::to_string(eo.budget) + " simulations, sized to policy+anneal's time"});
    save("anneal-equal-time", equal.placement);
    rows.push_back({ng.name, "lower-bound", lb, 0, lb, true, "max(total cost / D, critical path)"});
    progress.update(static_cast<int64_t>(gi + 1));
  }
  progress.finish();
  // Ratios to the best classical placer of the same graph.
  std::map<std::string, double> best_of_graph;
  for (const Row& r : rows)
    if (r.method == "best-classical" && r.feasible) best_of_graph[r.graph] = r.runtime_us;
  std::string csv =
      "graph,method,devices,runtime_us,feasible,place_ms,lower_bound_us,ratio_to_lb,"
      "ratio_to_best_classical,note\n";
  struct Agg {
    double log_sum = 0, log_lb = 0, ms = 0;
    int n = 0, failures = 0, graphs = 0;
  };
  std::map<std::string, Agg> agg;
  std::vector<std::string> order;
  for (const Row& r : rows) {
    auto it = best_of_graph.find(r.graph);
    double ratio = (it != best_of_graph.end() && r.feasible) ? r.runtime_us / it->second : NAN;
    double rlb = (r.lb > 0 && r.feasible) ? r.runtime_us / r.lb : NAN;
    char buf[512];
    std::snprintf(buf, sizeof buf, "%s,%s,%d,%.6f,%s,%.3f,%.6f,%.6f,%.6f,\"%s\"\n", r.graph.c_str(),
                  r.method.c_str(), cluster.num_devices(), r.runtime_us,
                  r.feasible ? "true" : "false", r.place_ms, r.lb, rlb, ratio, r.note.c_str());
    csv += buf;
    if (!agg.count(r.method)) order.push_back(r.method);
    Agg& g = agg[r.method];
    ++g.graphs;
    g.ms += r.place_ms;
    if (!r.feasible) {
      ++g.failures;  // infeasible placements are failures, never fast runs
    } else if (std::isfinite(ratio)) {
      g.log_sum += std::log(ratio);
      g.log_lb += std::isfinite(rlb) ? std::log(rlb) : 0;
      ++g.n;
    }
  }
  write_file_atomic(a.out, csv);
  std::printf("\nZero-shot evaluation of %s on %zu graphs (%s split of %s), %d devices\n",
              policy.path.c_str(), graphs.size(), a.split.c_str(), a.graphs.c_str(),
              cluster.num_devices());
  std::printf("%-20s %12s %12s %12s %9s\n", "method", "vs best-cl.", "vs lower bd", "place ms",
              "failures");
  for (const auto& m : order) {
    const Agg& g = agg[m];
    std::printf("%-20s %12.3f %12.3f %12.2f %5d/%-3d\n", m.c_str(),
                g.n ? std::exp(g.log_sum / g.n) : NAN, g.n ? std::exp(g.log_lb / g.n) : NAN,
                g.graphs ? g.ms / g.graphs : 0.0, g.failures, g.graphs);
  }
  std::printf(
      "(geometric means of runtime ratios over feasible placements; < 1 beats the best "
      "classical placer; report: %s)\n",
      a.out.c_str());
}

}  // namespace

void register_learning_commands(CLI::App& app) {
  auto opts = std::make_shared<RunOptions>();
  CLI::App* train =
      app.add_subcommand("train", "Train a policy in one process (MPI: placeto_actor)");
  train->add_option("--config", opts->config_path, "Training config (YAML)")->required();
  train->add_option("--run-dir", opts->run_dir, "Run directory")->required();
  train->add_option("--resume", opts->resume, "none, auto (from LATEST) or a checkpoint path");
  train->add_option("overrides", opts->overrides, "Config overrides key=value");
  train->callback([opts] {
    torch::set_num_threads(1);
    LocalCollective coll;
    int rc = run_training(*opts, coll);
    if (rc != kExitDone) throw CLI::RuntimeError(rc);
  });

  auto ea = std::make_shared<EvalArgs>();
  CLI::App* ev = app.add_subcommand(
      "eval",
      "Place every graph of a directory zero-shot with a checkpoint, next to every "
      "classical placer, anneal (best-known) and the lower bound");
  ev->add_option("--checkpoint", ea->checkpoint, "Checkpoint file, directory or LATEST")
      ->required();
  ev->add_option("--graphs", ea->graphs, "Family directory (manifest.json) or graph directory")
      ->required();
  ev->add_option("--split", ea->split, "test (default), train or all");
  ev->add_option("--devices", ea->devices, "Device count (must match the policy)");
  ev->add_option("--cluster", ea->cluster, "Cluster description (YAML)");
  ev->add_option("--samples", ea->samples, "Best of k sampled placements (default 8)")
      ->check(CLI::Range(1, 100000));
  ev->add_option("--methods", ea->methods, "Classical placers (default: all fast ones)");
  ev->add_option("--anneal-budget", ea->anneal_budget, "Simulations for anneal (default 2000)");
  ev->add_option("--seed", ea->seed, "Seed (default 1)");
  ev->add_option("--placements", ea->placements, "Write every placement to this directory");
  ev->add_option("--out", ea->out, "Report (CSV)")->required();
  ev->callback([ea] { run_eval(*ea); });
}

}  // namespace placeto
