// The "layered" training family (issue #35 item 1): random layered DAGs drawn over wide
// ranges, so that a learned placer trained on them has seen graphs far from the ENAS-style
// families.  Each graph draws, from its own seed:
//  - its depth (spec.steps, or 4 to 32 layers) and widest layer (spec.width, or 1 to 12 ops);
//  - its compute-to-communication ratio r, log-uniform over 0.01 to 100: an op takes r times
//    (with a jitter of up to 3x either way) what moving its output across the profile's
//    intra-node link takes, so graphs range from transfer-bound to compute-bound;
//  - its fan-in (each op reads 1 to k of its predecessors, k in 1..4) and its reach (an input
//    comes from up to 1 to 3 layers back), which set fan-out as well;
//  - output sizes, log-uniform over 10 KB to 30 MB per op;
//  - whether it is a training step (half of the graphs: gradient and update ops from
//    TrainingGraphBuilder, and parameters of 10 KB to 100 MB on half of the ops) or a forward
//    dataflow graph (no gradients, no parameters).
// Every op without a consumer feeds the last op (the loss), so every op lies on a path to it.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "sim/cost_model.h"
#include "sim/families/generators.h"
#include "sim/families/training_graph.h"

namespace placeto {
namespace {

double log_uniform(FamilyRng& rng, double lo, double hi) {
  return std::exp(std::log(lo) + rng.uniform01() * (std::log(hi) - std::log(lo)));
}

int draw_between(FamilyRng& rng, int lo, int hi) {
  return lo + static_cast<int>(rng.below(hi - lo + 1));
}

struct LayeredOp {
  std::string name;
  double cost_us = 0;
  int64_t out_bytes = 0;
  int64_t param_bytes = 0;
  std::vector<int> inputs;  // indices into the op list
};

}  // namespace

Graph build_layered_graph(const FamilySpec& spec, FamilyRng& rng, const std::string& name) {
  const DeviceProfile& profile = device_profile(spec.profile);
  const int depth = spec.steps > 0 ? spec.steps : draw_between(rng, 4, 32);
  const int max_width = spec.width > 0 ? spec.width : draw_between(rng, 1, 12);
  const double ratio = log_uniform(rng, 0.01, 100.0);
  const int max_fan_in = draw_between(rng, 1, 4);
  const int reach = draw_between(rng, 1, 3);
  const bool training = rng.uniform01() < 0.5;

  auto transfer_us = [&](int64_t bytes) {
    return profile.intra_node_latency_us +
           1e6 * static_cast<double>(bytes) / profile.intra_node_bandwidth;
  };
  std::vector<LayeredOp> ops;
  std::vector<std::vector<int>> layers;
  std::vector<int> consumers;
  auto new_op = [&](const std::string& op_name, const std::vector<int>& inputs) {
    LayeredOp o;
    o.name = op_name;
    o.out_bytes = static_cast<int64_t>(log_uniform(rng, 1e4, 3e7));
    o.cost_us = ratio * transfer_us(o.out_bytes) * log_uniform(rng, 1.0 / 3, 3.0);
    if (training && rng.uniform01() < 0.5)
      o.param_bytes = static_cast<int64_t>(log_uniform(rng, 1e4, 1e8));
    o.inputs = inputs;
    for (int u : inputs) ++consumers[u];
    ops.push_back(o);
    consumers.push_back(0);
    return static_cast<int>(ops.size()) - 1;
  };
  layers.push_back({new_op("input", {})});
  for (int l = 1; l <= depth; ++l) {
    std::vector<int> layer;
    const int width = draw_between(rng, 1, max_width);
    for (int i = 0; i < width; ++i) {
      std::vector<int> inputs;
      const int fan_in = draw_between(rng, 1, max_fan_in);
      for (int k = 0; k < fan_in; ++k) {
        // The first input from the layer before, the others up to `reach` layers back.
        const int back = k == 0 ? 1 : draw_between(rng, 1, std::min(reach, l));
        const std::vector<int>& from = layers[l - back];
        const int u = from[rng.below(static_cast<int64_t>(from.size()))];
        if (std::find(inputs.begin(), inputs.end(), u) == inputs.end()) inputs.push_back(u);
      }
      layer.push_back(new_op("l" + std::to_string(l) + "_" + std::to_string(i), inputs));
    }
    layers.push_back(std::move(layer));
  }
  std::vector<int> sinks;
  for (size_t v = 0; v < ops.size(); ++v)
    if (consumers[v] == 0) sinks.push_back(static_cast<int>(v));
  const int loss = new_op("loss", sinks);
  ops[loss].param_bytes = 0;
  ops[loss].out_bytes = 4;
  ops[loss].cost_us = profile.launch_overhead_us;

  if (!training) {
    GraphBuilder b("layered");
    for (const LayeredOp& o : ops) {
      const NodeId v = b.add_node(o.name, "layer", o.cost_us, {o.out_bytes});
      for (int u : o.inputs) b.add_edge(u, v);
    }
    b.set_name(name);
    return b.build();
  }
  // A training step: the forward costs become FLOPs at the profile's roofline rate, so that
  // TrainingGraphBuilder prices each gradient op as it prices the families' ones.
  TrainingGraphBuilder tb(name, profile);
  const double flops_per_us = 1e-6 * profile.peak_flops * profile.compute_efficiency;
  std::vector<int> ids(ops.size());
  for (size_t v = 0; v < ops.size(); ++v) {
    const LayeredOp& o = ops[v];
    std::vector<int> inputs;
    for (int u : o.inputs) inputs.push_back(ids[u]);
    const double flops = std::max(0.0, o.cost_us - profile.launch_overhead_us) * flops_per_us;
    ids[v] = tb.add_op(o.name, v == 0 ? "input" : "layer", flops, 0.0, o.out_bytes, inputs,
                       o.param_bytes, /*differentiable=*/v != 0);
  }
  tb.set_loss(ids[loss]);
  return tb.build();
}

}  // namespace placeto
