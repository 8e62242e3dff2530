// placeto compare: every method on every graph of a directory, written as CSV and summarised
// as a table.  Per graph it adds a "best-classical" row (the best of the fast placers that
// ran: feasible first, then fastest) and compares every row with the single-device
// placement, flagging losses instead of hiding them.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>

#include "common/error.h"
#include "common/files.h"
#include "common/progress.h"
#include "launch/commands.h"
#include "launch/placer_cli.h"
#include "sim/families/family.h"
#include "sim/graph_io.h"
#include "sim/placers/evaluation.h"

namespace placeto {
namespace {

constexpr const char* kBestClassical = "best-classical";

struct CompareArgs {
  std::string graphs, methods, out;
  PlacerCliArgs placer;
};

struct Row {
  std::string graph, method;
  PlacementEvaluation eval;
  double place_ms = 0;
  double ratio_to_single = 0;
  bool loses_to_single = false;
  std::string note;
};

std::vector<std::string> parse_methods(const std::string& list) {
  if (list.empty()) return placer_names();
  std::vector<std::string> out;
  std::stringstream ss(list);
  for (std::string item; std::getline(ss, item, ',');) {
    item.erase(0, item.find_first_not_of(" \t"));
    item.erase(item.find_last_not_of(" \t") + 1);
    if (item.empty()) throw InputError("--methods '" + list + "': empty method name");
    make_placer(item);  // validates, with "did you mean"
    if (std::find(out.begin(), out.end(), item) != out.end())
      throw InputError("--methods '" + list + "': '" + item + "' is listed twice");
    out.push_back(item);
  }
  return out;
}

std::vector<std::string> list_graph_files(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw InputError("--graphs " + dir + ": not a directory");
  std::vector<std::string> files;
  if (fs::exists(dir + "/manifest.json", ec)) {  // a generated family: all of its graphs
    FamilyManifest m = load_family_manifest(dir);
    std::vector<std::string> names = m.train;
    names.insert(names.end(), m.test.begin(), m.test.end());
    files = manifest_paths(dir, names);
    std::sort(files.begin(), files.end());
    return files;
  }
  for (const auto& entry : fs::directory_iterator(dir, ec))
    if (entry.is_regular_file() && entry.path().extension() == ".json")
      files.push_back(entry.path().string());
  if (ec) throw SystemError("--graphs " + dir + ": cannot list: " + ec.message());
  if (files.empty()) throw InputError("--graphs " + dir + ": no .json graph files in it");
  std::sort(files.begin(), files.end());
  return files;
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += (c == '"') ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

std::string number(double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.10g", x);
  return buf;
}

std::string to_csv(const std::vector<Row>& rows, int devices) {
  std::ostringstream os;
  os << "graph,method,devices,runtime_us,peak_mem_bytes_max,feasible,place_ms,lower_bound_us,"
        "ratio_to_lb,ratio_to_single,loses_to_single,note\n";
  for (const Row& r : rows)
    os << csv_field(r.graph) << ',' << r.method << ',' << devices << ','
       << number(r.eval.runtime_us) << ',' << r.eval.peak_mem_bytes_max << ','
       << (r.eval.feasible ? "true" : "false") << ',' << number(r.place_ms) << ','
       << number(r.eval.lower_bound_us) << ',' << number(r.eval.ratio_to_lb) << ','
       << number(r.ratio_to_single) << ',' << (r.loses_to_single ? "true" : "false") << ','
       << csv_field(r.note) << '\n';
  return os.str();
}

// Geometric means over all graphs (infeasible runs included: their runtime is still
// defined; the infeasible column says how many there were).
void print_table(const std::vector<Row>& rows, const std::vector<std::string>& methods) {
  std::vector<std::string> order = methods;
  order.push_back(kBestClassical);
  std::printf("%-15s %6s %12s %15s %12s %10s %15s\n", "method", "graphs", "gmean/lb",
              "gmean/single", "mean ms", "infeasible", "loses_to_single");
  for (const std::string& m : order) {
    int count = 0, infeasible = 0, losses = 0;
    double log_lb = 0, log_single = 0, ms = 0;
    for (const Row& r : rows) {
      if (r.method != m) continue;
      ++count;
      log_lb += std::log(r.eval.ratio_to_lb > 0 ? r.eval.ratio_to_lb : 1.0);
      log_single += std::log(r.ratio_to_single > 0 ? r.ratio_to_single : 1.0);
      ms += r.place_ms;
      infeasible += r.eval.feasible ? 0 : 1;
      losses += r.loses_to_single ? 1 : 0;
    }
    if (count == 0) continue;
    std::printf("%-15s %6d %12.4f %15.4f %12.3f %10d %15d\n", m.c_str(), count,
                std::exp(log_lb / count), std::exp(log_single / count), ms / count, infeasible,
                losses);
  }
  bool header = false;
  for (const Row& r : rows) {
    if (!r.loses_to_single || r.method == kBestClassical) continue;
    if (!header) std::printf("\nLosses to single (runtime above the single-device placement's):\n");
    header = true;
    std::printf("  %s: %s is %.4fx single\n", r.graph.c_str(), r.method.c_str(), r.ratio_to_single);
  }
  for (const Row& r : rows)
    if (r.method == kBestClassical && r.loses_to_single)
      std::printf("  %s: even the best classical placer (%s) loses to single\n", r.graph.c_str(),
                  r.note.c_str());
}

// Feasible first, then faster.
bool better(const PlacementEvaluation& a, const PlacementEvaluation& b) {
  if (a.feasible != b.feasible) return a.feasible;
  return a.runtime_us < b.runtime_us;
}

void run_compare(const CompareArgs& a) {
  check_output_path(a.out, {a.placer.cluster});
  const std::vector<std::string> methods = parse_methods(a.methods);
  const std::vector<std::string> files = list_graph_files(a.graphs);
  const Cluster c = cluster_from_cli(a.placer);
  std::map<std::string, std::unique_ptr<Placer>> placers;
  for (const auto& m : methods) placers[m] = make_placer(m);
  auto single = make_placer("single");
  const auto& fast = fast_placer_names();

  std::vector<Row> rows;
  ProgressLine progress("compare", static_cast<int64_t>(files.size() * methods.size()), "runs");
  int64_t done = 0;
  for (const std::string& file : files) {
    const Graph g = load_graph(file);
    const std::string name = g.name().empty() ? file : g.name();
    // The reference every row is compared with, whether or not "single" is a listed method.
    const PlacementEvaluation single_eval = run_placer(*single, g, c, a.placer.options).evaluation;
    const size_t first = rows.size();
    for (const std::string& m : methods) {
      const PlacerRun run = run_placer(*placers[m], g, c, a.placer.options);
      Row r{name, m, run.evaluation, run.place_ms, 0, false, run.message};
      rows.push_back(std::move(r));
      progress.update(++done, name);
    }
    Row best;
    bool have_best = false;
    for (size_t i = first; i < rows.size(); ++i) {
      if (std::find(fast.begin(), fast.end(), rows[i].method) == fast.end()) continue;
      best.place_ms += rows[i].place_ms;
      if (!have_best || better(rows[i].eval, best.eval)) {
        best.eval = rows[i].eval;
        best.note = rows[i].method;
        have_best = true;
      }
    }
    if (have_best) {
      best.graph = name;
      best.method = kBestClassical;
      rows.push_back(best);
    }
    for (size_t i = first; i < rows.size(); ++i) {
      Row& r = rows[i];
      r.ratio_to_single =
          single_eval.runtime_us > 0 ? r.eval.runtime_us / single_eval.runtime_us : 0;
      // A relative tolerance keeps equal schedules (summed in another order) from counting.
      r.loses_to_single = r.eval.runtime_us > single_eval.runtime_us * (1 + 1e-12);
    }
  }
  progress.finish();
  write_file_atomic(a.out, to_csv(rows, c.num_devices()));
  print_table(rows, methods);
  std::printf("\nwrote %s (%zu graphs, %zu methods)\n", a.out.c_str(), files.size(),
              methods.size());
}

}  // namespace

void register_compare_command(CLI::App& app) {
  auto args = std::make_shared<CompareArgs>();
  CLI::App* cmd = app.add_subcommand(
      "compare", "Run placement methods over a directory of graphs; CSV report and summary");
  cmd->add_option("--graphs", args->graphs, "Directory of graph files (*.json)")->required();
  cmd->add_option("--methods", args->methods,
                  "Comma-separated methods (default: all, anneal included)");
  cmd->add_option("--out", args->out, "CSV report to write")->required();
  add_placer_cli_options(cmd, &args->placer);
  cmd->callback([args] { run_compare(*args); });
}

}  // namespace placeto
