// placeto compare: every method on every graph of a directory, through the evaluation
// protocol (sim/placers/protocol.h), written as CSV and summarised as a table.  Per graph it
// adds the best-classical row and compares every row with `single`, flagging losses instead
// of hiding them.
#include <cstdio>
#include <memory>

#include "common/error.h"
#include "common/files.h"
#include "common/progress.h"
#include "launch/commands.h"
#include "launch/placer_cli.h"
#include "sim/graph_set.h"
#include "sim/placers/protocol.h"
#include "sim/placers/registry.h"

namespace placeto {
namespace {

struct CompareArgs {
  std::string graphs, methods, out, checkpoint;
  PlacerCliArgs placer;
};

// Empty -> every classical method.  Learned methods need --checkpoint, which every method
// that needs or accepts one gets.
std::vector<std::string> parse_methods(const std::string& list, const std::string& checkpoint) {
  if (list.empty()) return placer_names();
  const std::string what = "--methods '" + list + "'";
  std::vector<std::string> out = parse_placer_list(list, what);
  bool used = false;
  for (const std::string& m : out) {
    const PlacerInfo& info = placer_info(m);
    if (info.needs_checkpoint && checkpoint.empty())
      throw InputError(what + ": '" + m + "' needs a checkpoint (--checkpoint)");
    used = used || info.needs_checkpoint || info.accepts_checkpoint;
  }
  if (!checkpoint.empty() && !used)
    throw InputError("--checkpoint " + checkpoint + ": none of " + what +
                     " is a learned method that takes one");
  return out;
}

void run_compare(const CompareArgs& a) {
  check_output_path(a.out, {a.placer.cluster, a.checkpoint});
  std::vector<MethodSpec> specs;
  for (const std::string& m : parse_methods(a.methods, a.checkpoint)) specs.push_back({m, m});
  specs.push_back({"best-classical", "best"});
  validate_specs(specs);
  const std::vector<NamedGraph> graphs = load_graph_split(a.graphs, "all");
  const Cluster c = cluster_from_cli(a.placer);
  ProgressLine progress("compare", static_cast<int64_t>(graphs.size() * specs.size()), "runs");
  ProtocolOptions po;
  po.placer = a.placer.options;
  po.placer.checkpoint = a.checkpoint;
  po.on_row = [&](int64_t done, int64_t, const std::string& graph) {
    progress.update(done, graph);
  };
  const std::vector<GraphResult> results = run_protocol(graphs, c, specs, po);
  progress.finish();
  write_file_atomic(a.out, protocol_csv(results, c.num_devices()));
  std::fputs(protocol_summary(results).c_str(), stdout);
  std::printf("\nwrote %s (%zu graphs, %zu methods)\n", a.out.c_str(), graphs.size(),
              specs.size() - 1);
}

}  // namespace

void register_compare_command(CLI::App& app) {
  auto args = std::make_shared<CompareArgs>();
  CLI::App* cmd = app.add_subcommand(
      "compare", "Run placement methods over a directory of graphs; CSV report and summary");
  cmd->add_option("--graphs", args->graphs,
                  "Family directory (manifest.json: all its graphs) or directory of *.json "
                  "graphs")
      ->required();
  cmd->add_option(
      "--methods", args->methods,
      "Comma-separated methods (default: every classical one, anneal included):\n" + placer_help());
  cmd->add_option("--out", args->out, "CSV report to write")->required();
  cmd->add_option("--checkpoint", args->checkpoint,
                  "Checkpoint for the learned methods in --methods (policy, policy-search, "
                  "auto)");
  add_placer_cli_options(cmd, &args->placer);
  cmd->callback([args] { run_compare(*args); });
}

}  // namespace placeto
