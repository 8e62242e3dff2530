// `placeto eval` (zero-shot placement of a directory of graphs by a Placeto checkpoint, next to
// every classical placer, through the evaluation protocol).  In libplaceto_policy.so: it needs
// LibTorch (launch/torch_module.h).
#include <torch/torch.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <sstream>

#include "common/error.h"
#include "common/files.h"
#include "common/progress.h"
#include "launch/commands.h"
#include "launch/equal_time_table.h"
#include "learner/policy_io.h"
#include "sim/graph_io.h"
#include "sim/graph_set.h"
#include "sim/placers/protocol.h"
#include "sim/placers/registry.h"

namespace placeto {

namespace {

struct EvalArgs {
  std::string checkpoint, graphs, split = "test", cluster, out, placements, methods;
  std::string equal_time, search_checkpoint;
  int devices = 0;
  int samples = 8;
  int64_t seed = 1;
  int64_t anneal_budget = 2000;
  double time_ms = 0;
};

// The rows of `placeto eval`: the policy (greedy, best of k), the classical placers and the
// best of them, anneal, anneal from the policy, and anneal at the time that took.  With
// --time-ms every search gets that time instead of a simulation budget.
std::vector<MethodSpec> eval_specs(const EvalArgs& a) {
  std::vector<MethodSpec> specs;
  MethodSpec greedy{"policy-greedy", "policy"};
  greedy.samples = 1;
  specs.push_back(greedy);
  MethodSpec best{"policy-best-of-" + std::to_string(a.samples), "policy"};
  best.samples = a.samples;
  specs.push_back(best);
  std::vector<std::string> methods = fast_placer_names();
  if (!a.methods.empty()) {
    methods = parse_placer_list(a.methods, "--methods '" + a.methods + "'");
    for (const std::string& m : methods)
      if (placer_info(m).kind != PlacerKind::kFast)
        throw InputError("--methods: '" + m + "' is not a fast classical placer (" +
                         placer_list(fast_placer_names()) + ")");
  }
  for (const auto& m : methods) specs.push_back({m, m});
  specs.push_back({"best-classical", "best"});
  auto search = [&](MethodSpec s) {
    if (a.time_ms > 0) {
      s.time_ms = a.time_ms;
    } else {
      s.budget = a.anneal_budget;
    }
    return s;
  };
  MethodSpec anneal = search({"anneal", "anneal"});
  anneal.note = "best-known";
  specs.push_back(anneal);
  MethodSpec seeded = search({"policy+anneal", "policy+anneal"});
  seeded.samples = a.samples;
  seeded.note = "anneal from policy-best-of-" + std::to_string(a.samples);
  specs.push_back(seeded);
  // Equal time, not equal simulations: anneal given the time policy+anneal took on the same
  // graph; it cools by the time spent, so its schedule completes.
  MethodSpec equal{"anneal-equal-time", "anneal"};
  equal.match_time_of = "policy+anneal";
  equal.note = "given policy+anneal's time";
  specs.push_back(equal);
  return specs;
}

// --equal-time "policy,1000": the rows of the equal-time table.  Each column gives every method
// the same placement time: "policy" the greedy policy's own time on each graph, a number that
// many milliseconds.  In each column: the policy (greedy in the policy's column, policy+anneal
// in the others), auto (the learned search, --search-checkpoint), anneal and descent.
std::vector<MethodSpec> equal_time_specs(const EvalArgs& a, EqualTimeTable* table) {
  std::vector<MethodSpec> specs;
  MethodSpec greedy{"policy", "policy"};
  greedy.samples = 1;
  specs.push_back(greedy);
  specs.push_back({"best-classical", "best"});
  const std::string search_name =
      a.search_checkpoint == "none"
          ? "auto (fast placers, then chain-anneal and descent)"
          : "auto (learned search, " +
                (a.search_checkpoint.empty() ? "the default model" : a.search_checkpoint) + ")";
  table->rows = {{"Placeto policy (then anneal, if time is left)", {}},
                 {search_name, {}},
                 {"anneal", {}},
                 {"descent", {}}};
  std::vector<std::string> columns;
  std::stringstream list(a.equal_time);
  for (std::string item; std::getline(list, item, ',');) {
    if (item.empty()) throw InputError("--equal-time '" + a.equal_time + "': an empty item");
    const bool policy_time = item == "policy";
    double ms = 0;
    if (!policy_time) {
      char* end = nullptr;
      ms = std::strtod(item.c_str(), &end);
      if (end == item.c_str() || *end != '\0' || !(ms > 0) || !std::isfinite(ms) || ms > 1e8)
        throw InputError("--equal-time '" + a.equal_time + "': '" + item +
                         "' is neither 'policy' nor a time in milliseconds (> 0)");
    }
    const std::string tag = policy_time ? "@policy-time" : "@" + item + "ms";
    table->columns.push_back(policy_time ? "the policy's time" : item + " ms");
    auto timed = [&](const std::string& label, const std::string& method) {
      MethodSpec s{label + tag, method};
      if (policy_time) {
        s.match_time_of = "policy";
      } else {
        s.time_ms = ms;
      }
      return s;
    };
    if (policy_time) {
      table->rows[0].labels.push_back("policy");
    } else {
      specs.push_back(timed("policy+anneal", "policy+anneal"));
      table->rows[0].labels.push_back(specs.back().label);
    }
    MethodSpec search = timed("auto", "auto");
    search.checkpoint = a.search_checkpoint.empty() ? "" : a.search_checkpoint;
    specs.push_back(search);
    table->rows[1].labels.push_back(search.label);
    specs.push_back(timed("anneal", "anneal"));
    table->rows[2].labels.push_back(specs.back().label);
    specs.push_back(timed("descent", "descent"));
    table->rows[3].labels.push_back(specs.back().label);
  }
  if (table->columns.empty()) throw InputError("--equal-time: give at least one time");
  return specs;
}

void run_eval(const EvalArgs& a) {
  check_output_path(a.out, {a.checkpoint, a.cluster});
  if (a.time_ms > 0 && a.anneal_budget != 2000)
    throw InputError("give --anneal-budget or --time-ms, not both");
  torch::set_num_threads(1);
  LoadedPolicy policy = load_policy(a.checkpoint);
  const Cluster cluster = resolve_cluster(a.cluster, a.devices, policy.config.devices);
  if (!policy.net->places(cluster.num_devices()))
    throw InputError(policy.path + ": the policy was trained for " +
                     std::to_string(policy.config.devices) + " devices, but evaluation asks for " +
                     std::to_string(cluster.num_devices()));
  EqualTimeTable table;
  if (!a.equal_time.empty() && (!a.methods.empty() || a.time_ms > 0 || a.anneal_budget != 2000))
    throw InputError(
        "--equal-time sets every method's time: drop --methods, --time-ms and "
        "--anneal-budget");
  if (!a.search_checkpoint.empty() && a.equal_time.empty())
    throw InputError("--search-checkpoint is the model of auto's row in --equal-time");
  const std::vector<MethodSpec> specs =
      a.equal_time.empty() ? eval_specs(a) : equal_time_specs(a, &table);
  std::vector<NamedGraph> graphs = load_graph_split(a.graphs, a.split);
  if (!a.placements.empty()) make_directories(a.placements);
  ProtocolOptions po;
  po.placer.seed = a.seed;
  po.placer.checkpoint = policy.path;
  po.lower_bound_row = true;
  ProgressLine progress("eval", static_cast<int64_t>(graphs.size()), "graphs", 2.0);
  po.on_row = [&](int64_t done, int64_t, const std::string&) {
    progress.update(done / static_cast<int64_t>(specs.size()));
  };
  const std::vector<GraphResult> results = run_protocol(graphs, cluster, specs, po);
  progress.finish();
  if (!a.placements.empty()) {
    for (size_t gi = 0; gi < results.size(); ++gi)
      for (const ProtocolRow& r : results[gi].rows)
        if (r.method != "lower-bound")
          save_placement(graphs[gi].graph, r.placement,
                         a.placements + "/" + r.graph + "." + r.label + ".json");
  }
  write_file_atomic(a.out, protocol_csv(results, cluster.num_devices()));
  std::printf("\nZero-shot evaluation of %s on %zu graphs (%s split of %s), %d devices\n",
              policy.path.c_str(), graphs.size(), a.split.c_str(), a.graphs.c_str(),
              cluster.num_devices());
  if (a.equal_time.empty()) {
    std::fputs(protocol_summary(results).c_str(), stdout);
  } else {
    std::fputs(equal_time_table(results, table).c_str(), stdout);
  }
  std::printf("(report: %s)\n", a.out.c_str());
}

}  // namespace

int run_eval_command(const std::vector<std::string>& args) {
  auto ea = std::make_shared<EvalArgs>();
  CLI::App app{kEvalSummary, "placeto eval"};
  CLI::App* ev = &app;
  ev->add_option("--checkpoint", ea->checkpoint, "Checkpoint file, directory or LATEST")
      ->required();
  ev->add_option("--graphs", ea->graphs, "Family directory (manifest.json) or graph directory")
      ->required();
  ev->add_option("--split", ea->split, "test (default), train or all");
  ev->add_option("--devices", ea->devices,
                 "Device count (default: the policy's; a policy trained with policy.any_devices "
                 "places any count)");
  ev->add_option("--cluster", ea->cluster, "Cluster description (YAML)");
  ev->add_option("--samples", ea->samples, "Best of k sampled placements (default 8)")
      ->check(CLI::Range(1, 100000));
  ev->add_option("--methods", ea->methods, "Classical placers (default: all fast ones)");
  ev->add_option("--anneal-budget", ea->anneal_budget,
                 "Simulations for anneal and policy+anneal (default 2000)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 40));
  ev->add_option("--time-ms", ea->time_ms,
                 "Give anneal and policy+anneal this many milliseconds each instead of a "
                 "simulation budget (equal time; the schedule completes)")
      ->check(CLI::NonNegativeNumber);
  ev->add_option("--equal-time", ea->equal_time,
                 "Instead of the full table: every method given the same placement time, one "
                 "column per item of a list of 'policy' (the greedy policy's own time on each "
                 "graph) and milliseconds, e.g. policy,1000");
  ev->add_option("--search-checkpoint", ea->search_checkpoint,
                 "With --equal-time: the learned-search model of the auto row (default: "
                 "models/default.h5; none: auto is the fast placers, then chain-anneal and "
                 "descent)");
  ev->add_option("--seed", ea->seed, "Seed (default 1)");
  ev->add_option("--placements", ea->placements, "Write every placement to this directory");
  ev->add_option("--out", ea->out, "Report (CSV)")->required();
  ev->callback([ea] { run_eval(*ea); });
  return parse_command_app(app, args);
}

}  // namespace placeto
