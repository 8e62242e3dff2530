// placeto profile: time every op of an ONNX model on this machine (profiler/), write the graph
// with the measured costs, fit a device profile to the measurements (sim/cost_fit.h) and
// print how far the analytic cost model is from them (docs/COST_MODEL.md).  In
// libplaceto_profile.so: it needs LibTorch (launch/torch_module.h).
#include <cstdio>
#include <iostream>
#include <memory>

#include "common/error.h"
#include "common/files.h"
#include "common/json_util.h"
#include "launch/commands.h"
#include "profiler/profile.h"
#include "sim/cluster.h"
#include "sim/cost_fit.h"
#include "sim/device_profile_yaml.h"
#include "sim/graph_io.h"
#include "sim/placers/evaluation.h"

namespace placeto {
namespace {

struct ProfileArgs {
  std::string model, out, fit_out, report, fitted_name;
  std::vector<std::string> fit_with;  // reports of earlier runs whose ops join the fit
  std::vector<std::string> also;      // more profiles whose error is reported
  int64_t batch = 1;
  ProfileOptions options;
};

std::string default_fit_path(const std::string& out) {
  const std::string stem = out.size() > 5 && out.compare(out.size() - 5, 5, ".json") == 0
                               ? out.substr(0, out.size() - 5)
                               : out;
  return stem + ".profile.yaml";
}

double single_device_us(const Graph& g) {
  return evaluate_placement(g, default_cluster(1), Placement(1, g.num_nodes(), 0)).runtime_us;
}

Json stats_json(const ErrorStats& e) {
  return Json{{"ops", e.ops},
              {"median_abs_error", e.median_abs},
              {"p90_abs_error", e.p90_abs},
              {"sum_ratio", e.sum_ratio}};
}

// The error of `predicted` against the measured ops, overall and per op class.
Json error_table(const ProfileResult& r, const std::vector<double>& predicted) {
  std::map<std::string, std::pair<std::vector<double>, std::vector<double>>> by_class;
  std::vector<double> p_all, m_all;
  for (size_t v = 0; v < r.ops.size(); ++v) {
    if (!r.ops[v].measured || !(r.ops[v].measured_us > 0)) continue;
    p_all.push_back(predicted[v]);
    m_all.push_back(r.ops[v].measured_us);
    auto& [p, m] = by_class[r.imported.ops.nodes[v].op_class];
    p.push_back(predicted[v]);
    m.push_back(r.ops[v].measured_us);
  }
  Json classes = Json::object();
  for (const auto& [cls, pm] : by_class)
    classes[cls] = stats_json(error_stats(pm.first, pm.second));
  return Json{{"all", stats_json(error_stats(p_all, m_all))}, {"by_class", classes}};
}

// Splits one CSV line (fields may be quoted, with "" for a quote).
std::vector<std::string> split_csv_line(const std::string& line) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        fields.back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        fields.back() += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      fields.emplace_back();
    } else {
      fields.back() += c;
    }
  }
  return fields;
}

const char* kReportHeader =
    "op,op_type,op_class,role,flops,bytes,kernel,measured,measured_us,analytic_us,fitted_us";

// The measured ops of a report written by --report.
std::vector<CostSample> read_report_samples(const std::string& path) {
  const std::string text = read_file(path);
  std::vector<CostSample> out;
  size_t start = 0, columns = 0;
  int line_no = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(start, end - start);
    start = end + 1;
    ++line_no;
    if (line_no == 1) {
      if (line.rfind(kReportHeader, 0) != 0)
        throw InputError(path + ": line 1: not a `placeto profile --report` file (header '" +
                         line.substr(0, 80) + "')");
      columns = split_csv_line(line).size();
      continue;
    }
    if (line.empty()) continue;
    const std::vector<std::string> f = split_csv_line(line);
    auto fail = [&](const std::string& what) {
      throw InputError(path + ": line " + std::to_string(line_no) + ": " + what);
    };
    if (f.size() != columns)
      fail("expected " + std::to_string(columns) + " fields, got " + std::to_string(f.size()));
    CostSample s;
    s.op_class = f[2];
    try {
      s.flops = std::stod(f[4]);
      s.bytes = std::stod(f[5]);
      s.measured_us = std::stod(f[8]);
    } catch (const std::exception&) {
      fail("flops, bytes and measured_us must be numbers");
    }
    if (f[7] == "1" && s.measured_us > 0) out.push_back(s);
  }
  if (out.empty()) throw InputError(path + ": no measured ops");
  return out;
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

void run_profile(ProfileArgs a) {
  if (a.fit_out.empty()) a.fit_out = default_fit_path(a.out);
  check_output_path(a.out, {a.model});
  check_output_path(a.fit_out, {a.model, a.out}, "--fit-out");
  if (!a.report.empty()) check_output_path(a.report, {a.model, a.out, a.fit_out}, "--report");
  for (const std::string& name : a.also) resolve_device_profile(name);  // fail before timing
  std::vector<CostSample> extra;  // read first: a bad file fails before any timing
  for (const std::string& path : a.fit_with)
    for (const CostSample& s : read_report_samples(path)) extra.push_back(s);
  a.options.import.dynamic_dim = a.batch;
  const ProfileResult r = profile_model(a.model, a.options);
  const OpGraph& g = r.imported.ops;
  const int n = static_cast<int>(g.nodes.size());

  std::vector<CostSample> samples;
  for (int v = 0; v < n; ++v)
    if (r.ops[v].measured && r.ops[v].measured_us > 0)
      samples.push_back(
          {g.nodes[v].op_class, g.nodes[v].flops, g.nodes[v].bytes, r.ops[v].measured_us});
  if (a.fitted_name.empty()) a.fitted_name = g.name + "-" + a.options.timing.device + "-fitted";
  const DeviceProfile analytic = resolve_device_profile(a.options.import.profile);
  const size_t own_samples = samples.size();
  samples.insert(samples.end(), extra.begin(), extra.end());
  const DeviceProfile fitted = fit_device_profile(samples, analytic, a.fitted_name);

  std::vector<double> analytic_us(n), fitted_us(n), measured_us(n);
  for (int v = 0; v < n; ++v) {
    analytic_us[v] = r.ops[v].analytic_us;
    fitted_us[v] = op_node_cost_us(g.nodes[v], fitted);
    measured_us[v] = r.ops[v].measured ? r.ops[v].measured_us : 0;
  }
  const double scale = best_scale(analytic_us, measured_us);
  std::vector<double> scaled_us(n);
  for (int v = 0; v < n; ++v) scaled_us[v] = scale * analytic_us[v];

  Json also = Json::object();
  std::vector<std::pair<std::string, std::vector<double>>> also_us;  // report columns
  for (const std::string& name : a.also) {
    const DeviceProfile p = resolve_device_profile(name);
    std::vector<double> us(n);
    for (int v = 0; v < n; ++v) us[v] = op_node_cost_us(g.nodes[v], p);
    also_us.emplace_back(p.name, us);
    also[p.name] = Json{{"profile", name},
                        {"single_device_step_us", single_device_us(build_graph(g, us, a.model))},
                        {"error", error_table(r, us)}};
  }
  save_graph(r.measured, a.out);
  char notes[512];
  std::snprintf(notes, sizeof notes,
                "{model: '%s', ops_measured: %zu, ops_from_other_reports: %zu, device: %s, "
                "threads: %d, batch: %lld, training: %s}",
                a.model.c_str(), own_samples, extra.size(), a.options.timing.device.c_str(),
                a.options.timing.threads, static_cast<long long>(a.batch),
                a.options.import.training ? "true" : "false");
  write_file_atomic(a.fit_out, device_profile_to_yaml(fitted, notes));
  if (!a.report.empty()) {
    std::string csv = kReportHeader;
    for (const auto& [name, us] : also_us) csv += "," + csv_field(name + "_us");
    csv += "\n";
    for (int v = 0; v < n; ++v) {
      const OpNode& node = g.nodes[v];
      char nums[256];
      std::snprintf(nums, sizeof nums, "%.6g,%.6g", node.flops, node.bytes);
      char times[256];
      std::snprintf(times, sizeof times, "%d,%.4f,%.4f,%.4f", r.ops[v].measured ? 1 : 0,
                    r.ops[v].measured_us, analytic_us[v], fitted_us[v]);
      csv += csv_field(node.name) + "," + csv_field(node.op_type) + "," + node.op_class + "," +
             op_role_name(node.origin.role) + "," + nums + "," + csv_field(r.ops[v].kernel) + "," +
             times;
      for (const auto& [name, us] : also_us) {
        std::snprintf(times, sizeof times, ",%.4f", us[v]);
        csv += times;
      }
      csv += "\n";
    }
    write_file_atomic(a.report, csv);
  }

  Graph fitted_graph = build_graph(g, fitted_us, a.model);
  Json out;
  out["model"] = a.model;
  out["graph"] = a.out;
  out["fitted_profile"] = a.fit_out;
  if (!a.report.empty()) out["report"] = a.report;
  out["name"] = g.name;
  out["ops"] = n;
  out["measured_ops"] = own_samples;
  out["fit_ops"] = samples.size();
  out["device"] = a.options.timing.device;
  out["threads"] = a.options.timing.threads;
  out["batch"] = a.batch;
  out["training"] = a.options.import.training;
  out["timing_seconds"] = r.seconds;
  out["single_device_step_us"] =
      Json{{"measured_ops", single_device_us(r.measured)},
           {"analytic", single_device_us(r.imported.graph)},
           {"analytic_scaled", scale * single_device_us(r.imported.graph)},
           {"fitted", single_device_us(fitted_graph)}};
  out["analytic_profile"] = analytic.name;
  out["analytic_scale"] = scale;
  out["error"] = Json{{"analytic", error_table(r, analytic_us)},
                      {"analytic_scaled", error_table(r, scaled_us)},
                      {"fitted", error_table(r, fitted_us)}};
  if (!a.also.empty()) out["other_profiles"] = also;
  std::cout << out.dump() << std::endl;
}

}  // namespace

int run_profile_command(const std::vector<std::string>& argv) {
  auto args = std::make_shared<ProfileArgs>();
  CLI::App app{kProfileSummary, "placeto profile"};
  CLI::App* cmd = &app;
  cmd->add_option("model,--model", args->model, "ONNX model file")->required();
  cmd->add_option("--out", args->out, "Graph file to write, with measured costs")->required();
  cmd->add_option("--fit-out", args->fit_out,
                  "Fitted device profile to write (default: --out with .profile.yaml); use it "
                  "as `placeto import --profile FILE.yaml`");
  cmd->add_option("--fitted-name", args->fitted_name,
                  "Name of the fitted profile (default <model>-<device>-fitted)");
  cmd->add_option("--report", args->report,
                  "Per-op CSV: class, FLOPs, bytes, kernel, measured, analytic and fitted us");
  cmd->add_option("--fit-with", args->fit_with,
                  "Reports (--report) of other models whose measured ops join the fit")
      ->delimiter(',');
  cmd->add_option("--device", args->options.timing.device, "cpu (default) or cuda:K");
  cmd->add_option("--batch", args->batch,
                  "Value of the model's dynamic (batch) dimensions (default 1; a model without "
                  "dynamic axes is timed at its exported shapes)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 16));
  cmd->add_flag("--training", args->options.import.training,
                "Also time the backward pass and the parameter updates");
  cmd->add_option("--profile", args->options.import.profile,
                  "Analytic profile to compare with: a name or a .yaml file (default k80)");
  cmd->add_option("--also-profile", args->also,
                  "More profiles (names or .yaml files) whose error on the same measurements is "
                  "reported; the report gets a column <name>_us for each")
      ->delimiter(',');
  cmd->add_option("--threads", args->options.timing.threads, "CPU threads (default 1)")
      ->check(CLI::Range(1, 1024));
  cmd->add_option("--repeats", args->options.timing.repeats,
                  "Timed samples per op; the median is kept (default 7)")
      ->check(CLI::Range(1, 1000));
  cmd->add_option("--warmup", args->options.timing.warmup, "Untimed runs per op (default 2)")
      ->check(CLI::Range(0, 1000));
  cmd->add_option("--inputs", args->options.import.data_inputs,
                  "Graph inputs that carry data (default: detected)")
      ->delimiter(',');
  cmd->callback([args] { run_profile(*args); });
  return parse_command_app(app, argv);
}

}  // namespace placeto
