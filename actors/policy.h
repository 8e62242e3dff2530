// The Placeto policy network (LibTorch).
//
//  1. Node transform T: an MLP on each node's features.
//  2. Message passing over the DAG in both directions, each with its own MLPs f and g:
//     h_v <- T(x_v) + g(sum over neighbours u of f(h_u)); the two directions are
//     concatenated.  Variants: "radial" (k synchronous rounds, default 8), "sweep" (one pass
//     in topological order and one in reverse, computed level by level) and "none".
//  3. Pooling around the current node with three separate aggregators (mean over its
//     ancestors, its descendants, and the nodes that are neither -- optionally only the k
//     closest in simulated start time), plus the current node's own embedding.
//  4. A classifier MLP gives one logit per device.
//  5. With features.lookahead, a small MLP shared by the devices scores each device from its
//     what-if columns (actors/features.h) and adds that score to the device's logit; the
//     what-if columns are read from the current node's row only and are not node features.
//
// With features.any_devices (policy.any_devices) steps 4-5 change: no logit is tied to a
// device index.  The pooled context goes through the classifier's hidden layer; each device's
// columns of the current row (what-if and device columns, actors/features.h) through the
// device-shared layer; and one more device-shared layer scores the pair [context, device], so
// the same weights place any device count and any cluster.
//
// Every op is batched over a leading "step" dimension T, so an episode's (or several
// episodes') steps go through one forward and one backward.  The weights do not depend on
// graph size or op names; without any_devices the device count D is fixed by the model.
// Not thread-safe.
#pragma once

#include <torch/torch.h>

#include <string>
#include <vector>

#include "actors/features.h"
#include "actors/message_passing.h"
#include "sim/graph.h"

namespace placeto {

struct PolicyConfig {
  int num_devices = 2;  // D; a model refuses any other D unless features.any_devices
  int hidden = 16;      // embedding width H
  MessagePassing message_passing = MessagePassing::kRadial;
  int rounds = 8;                    // rounds of the radial variant
  bool parallel_aggregation = true;  // pool over "parallel" nodes
  int parallel_k = 0;                // 0: all parallel nodes, else the k closest
  // A value head (PPO): V(s) from the mean of the node embeddings and the current node's
  // own, through its own hidden layer.  Its parameters exist only when set.
  bool value_head = false;
  FeatureConfig features;
};

// Per-graph tensors the policy needs, built once per graph and reused for every step.
struct GraphTensors {
  int64_t num_nodes = 0;
  torch::Tensor src, dst;                // edges parent -> child, int64 [E]
  torch::Tensor ancestors, descendants;  // float [N, N]; row v marks v's ancestors/descendants
  // Sweep variant: nodes by depth (longest path from a source), and per level the edges
  // entering it (forward) / leaving it (backward) with level-local destination indices.
  struct Level {
    torch::Tensor nodes, edge_src, edge_local_dst;
  };
  std::vector<Level> fwd_levels, bwd_levels;
};

GraphTensors make_graph_tensors(const Graph& g, bool with_levels);

class PolicyNetImpl : public torch::nn::Module {
 public:
  explicit PolicyNetImpl(const PolicyConfig& config);

  // x: float [T, N, F]; current: int64 [T] (the current node of each step).
  // Returns logits [T, D].  Throws InputError when F does not match the model's D (with
  // any_devices: when F is not the node columns plus a whole number of devices' columns).
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& current,
                        const GraphTensors& gt);
  // Logits [T, D] and values [T] from one pass.  REQUIRES: config().value_head.
  std::pair<torch::Tensor, torch::Tensor> forward_with_value(const torch::Tensor& x,
                                                             const torch::Tensor& current,
                                                             const GraphTensors& gt);

  // Node embeddings after message passing: [T, N, 2H] (forward direction first).
  torch::Tensor embed(const torch::Tensor& x, const GraphTensors& gt);

  const PolicyConfig& config() const { return config_; }
  int feature_width() const { return feature_width(config_.num_devices); }
  // The feature width for a cluster of `devices` devices.
  int feature_width(int devices) const { return placeto::feature_width(config_.features, devices); }
  // The device counts the network can place: its own, or any with features.any_devices.
  bool places(int devices) const {
    return config_.features.any_devices ? devices >= 1 : devices == config_.num_devices;
  }

 private:
  torch::Tensor propagate(const torch::Tensor& h0, const torch::Tensor& src,
                          const torch::Tensor& dst, torch::nn::Linear& f, torch::nn::Linear& g);
  torch::Tensor embed_node_major(const torch::Tensor& x, const GraphTensors& gt);
  // Logits, and the values when `values` is given (the value head's input is built from the
  // same embedding).
  torch::Tensor logits_and_value(const torch::Tensor& x, const torch::Tensor& current,
                                 const GraphTensors& gt, torch::Tensor* values);
  torch::Tensor sweep(const torch::Tensor& h0, const std::vector<GraphTensors::Level>& levels,
                      torch::nn::Linear& f, torch::nn::Linear& g);

  PolicyConfig config_;
  torch::nn::Linear node_transform{nullptr};
  torch::nn::Linear f_fwd{nullptr}, g_fwd{nullptr}, f_bwd{nullptr}, g_bwd{nullptr};
  torch::nn::Linear agg_parents{nullptr}, agg_children{nullptr}, agg_parallel{nullptr};
  torch::nn::Linear classifier_hidden{nullptr}, classifier_out{nullptr};
  torch::nn::Linear value_hidden{nullptr}, value_out{nullptr};
  torch::nn::Linear lookahead_hidden{nullptr}, lookahead_out{nullptr};
  torch::nn::Linear device_mix{nullptr}, device_out{nullptr};  // any_devices
};
TORCH_MODULE(PolicyNet);

// Named parameters in a stable order (for checkpoints and gradient all-reduce).
std::vector<std::pair<std::string, torch::Tensor>> named_parameters_sorted(PolicyNet& net);

}  // namespace placeto
