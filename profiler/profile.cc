#include "profiler/profile.h"

#include <chrono>
#include <map>
#include <optional>

#include "common/error.h"
#include "common/progress.h"

namespace placeto {

ProfileResult profile_model(const std::string& path, const ProfileOptions& options) {
  check_timing_device(options.timing.device);
  ProfileResult r;
  r.imported = import_onnx(path, options.import);
  if (options.import.dynamic_dim != 1 && r.imported.summary.dynamic_dims == 0)
    throw InputError(path + ": --batch " + std::to_string(options.import.dynamic_dim) +
                     ": the model has no dynamic input dimension to set (export it with "
                     "dynamic_axes, or at that batch size)");
  set_timing_threads(options.timing.threads);
  const OpGraph& g = r.imported.ops;
  const int n = static_cast<int>(g.nodes.size());
  r.ops.resize(n);
  std::vector<double> cost(n, 0);
  // The grad and update ops of each forward op (training.h: they carry its ONNX node index).
  std::map<int, int> grad_of, update_of;
  for (int v = 0; v < n; ++v) {
    const OpNode& node = g.nodes[v];
    r.ops[v].analytic_us = r.imported.graph.cost_us(static_cast<NodeId>(v));
    if (node.origin.role == OpRole::kGrad) grad_of[node.origin.node] = v;
    if (node.origin.role == OpRole::kUpdate) update_of[node.origin.node] = v;
  }
  int forward_ops = 0;
  for (const OpNode& node : g.nodes) forward_ops += node.origin.role == OpRole::kForward;
  std::optional<ProgressLine> progress;
  if (options.progress) progress.emplace("profile " + g.name, forward_ops, "ops");
  const auto start = std::chrono::steady_clock::now();
  int done = 0;
  for (int v = 0; v < n; ++v) {
    const OpNode& node = g.nodes[v];
    if (node.origin.role != OpRole::kForward) continue;
    auto grad = grad_of.find(node.origin.node);
    auto update = update_of.find(node.origin.node);
    const bool has_kernel = node.flops > 0 || node.bytes > 0;
    if (!has_kernel) {
      r.ops[v].kernel = "none (a view)";
      if (grad != grad_of.end()) r.ops[grad->second].kernel = "none (a view)";
    } else {
      TimingOptions t = options.timing;
      t.backward = grad != grad_of.end();
      // The update holds the parameters (training.h moves param_bytes to it).
      const int64_t params = update != update_of.end() ? g.nodes[update->second].param_bytes : 0;
      const OpTiming timing = time_op(node.spec, params, t);
      auto record = [&](int op, double us, const std::string& kernel) {
        r.ops[op].kernel = kernel;
        r.ops[op].measured = timing.ran;
        cost[op] = timing.ran ? us : r.ops[op].analytic_us;
        r.ops[op].measured_us = cost[op];
      };
      record(v, timing.forward_us, timing.kernel);
      if (grad != grad_of.end())
        record(grad->second, timing.backward_us, timing.kernel + " backward");
      if (update != update_of.end())
        record(update->second, timing.update_us, "sgd momentum update");
    }
    ++done;
    if (progress) progress->update(done);
  }
  if (progress) progress->finish();
  for (int v = 0; v < n; ++v)
    if (g.nodes[v].is_input) r.ops[v].kernel = "none (a graph input)";
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  r.measured = build_graph(g, cost, path);
  return r;
}

}  // namespace placeto
