#include "actors/policy.h"

#include <algorithm>

#include "common/error.h"
#include "common/malloc_tuning.h"

namespace placeto {

GraphTensors make_graph_tensors(const Graph& g, bool with_levels) {
  GraphTensors gt;
  const int n = g.num_nodes();
  const int m = g.num_edges();
  gt.num_nodes = n;
  std::vector<int64_t> src(m), dst(m);
  for (EdgeId e = 0; e < m; ++e) {
    src[e] = g.edge_src(e);
    dst[e] = g.edge_dst(e);
  }
  gt.src = torch::tensor(src, torch::kInt64);
  gt.dst = torch::tensor(dst, torch::kInt64);
  // Reachability by bitsets in topological order.
  const int words = (n + 63) / 64;
  std::vector<uint64_t> anc(static_cast<size_t>(n) * words, 0);
  for (NodeId v : g.topo_order()) {
    uint64_t* row = &anc[static_cast<size_t>(v) * words];
    for (int i = g.parent_begin(v); i < g.parent_end(v); ++i) {
      NodeId u = g.edge_src(g.parent_edges()[i]);
      const uint64_t* urow = &anc[static_cast<size_t>(u) * words];
      for (int w = 0; w < words; ++w) row[w] |= urow[w];
      row[u / 64] |= 1ull << (u % 64);
    }
  }
  gt.ancestors = torch::zeros({n, n});
  auto a = gt.ancestors.accessor<float, 2>();
  for (int v = 0; v < n; ++v)
    for (int u = 0; u < n; ++u)
      if (anc[static_cast<size_t>(v) * words + u / 64] >> (u % 64) & 1) a[v][u] = 1.0f;
  gt.descendants = gt.ancestors.t().contiguous();
  if (with_levels) {
    std::vector<int> depth(n, 0), rdepth(n, 0);
    int max_depth = 0, max_rdepth = 0;
    for (NodeId v : g.topo_order())
      for (int i = g.parent_begin(v); i < g.parent_end(v); ++i)
        depth[v] = std::max(depth[v], depth[g.edge_src(g.parent_edges()[i])] + 1);
    const auto& topo = g.topo_order();
    for (auto it = topo.rbegin(); it != topo.rend(); ++it)
      for (int i = g.child_begin(*it); i < g.child_end(*it); ++i)
        rdepth[*it] = std::max(rdepth[*it], rdepth[g.edge_dst(g.child_edges()[i])] + 1);
    for (int v = 0; v < n; ++v) {
      max_depth = std::max(max_depth, depth[v]);
      max_rdepth = std::max(max_rdepth, rdepth[v]);
    }
    auto build = [&](const std::vector<int>& dep, int levels, bool forward) {
      std::vector<GraphTensors::Level> out;
      for (int l = 1; l <= levels; ++l) {
        std::vector<int64_t> nodes, es, ed;
        std::vector<int> local(n, -1);
        for (int v = 0; v < n; ++v)
          if (dep[v] == l) {
            local[v] = static_cast<int>(nodes.size());
            nodes.push_back(v);
          }
        for (EdgeId e = 0; e < m; ++e) {
          NodeId from = forward ? g.edge_src(e) : g.edge_dst(e);
          NodeId to = forward ? g.edge_dst(e) : g.edge_src(e);
          if (local[to] >= 0) {
            es.push_back(from);
            ed.push_back(local[to]);
          }
        }
        out.push_back({torch::tensor(nodes, torch::kInt64), torch::tensor(es, torch::kInt64),
                       torch::tensor(ed, torch::kInt64)});
      }
      return out;
    };
    gt.fwd_levels = build(depth, max_depth, true);
    gt.bwd_levels = build(rdepth, max_rdepth, false);
  }
  return gt;
}

PolicyNetImpl::PolicyNetImpl(const PolicyConfig& config) : config_(config) {
  tune_malloc_for_tensors();  // every process that runs the network wants it
  const int64_t f = node_feature_width(config.features, config.num_devices);
  const int64_t h = config.hidden;
  node_transform = register_module("node_transform", torch::nn::Linear(f, h));
  f_fwd = register_module("f_fwd", torch::nn::Linear(h, h));
  g_fwd = register_module("g_fwd", torch::nn::Linear(h, h));
  f_bwd = register_module("f_bwd", torch::nn::Linear(h, h));
  g_bwd = register_module("g_bwd", torch::nn::Linear(h, h));
  agg_parents = register_module("agg_parents", torch::nn::Linear(2 * h, h));
  agg_children = register_module("agg_children", torch::nn::Linear(2 * h, h));
  agg_parallel = register_module("agg_parallel", torch::nn::Linear(2 * h, h));
  classifier_hidden = register_module("classifier_hidden", torch::nn::Linear(5 * h, h));
  if (config.features.any_devices) {
    PLACETO_CHECK(config.features.lookahead);
    device_mix = register_module("device_mix", torch::nn::Linear(2 * h, h));
    device_out = register_module("device_out", torch::nn::Linear(h, 1));
  } else {
    classifier_out = register_module("classifier_out", torch::nn::Linear(h, config.num_devices));
  }
  if (config.value_head) {
    value_hidden = register_module("value_hidden", torch::nn::Linear(4 * h, h));
    value_out = register_module("value_out", torch::nn::Linear(h, 1));
  }
  if (config.features.lookahead) {
    lookahead_hidden = register_module(
        "lookahead_hidden", torch::nn::Linear(lookahead_width_per_device(config.features), h));
    if (!config.features.any_devices)
      lookahead_out = register_module("lookahead_out", torch::nn::Linear(h, 1));
  }
}

// Internally embeddings are node-major, [N, T, H]: gathering and scattering whole rows of
// T * H floats along dimension 0 is far cheaper than indexing dimension 1 of [T, N, H].
torch::Tensor PolicyNetImpl::propagate(const torch::Tensor& h0, const torch::Tensor& src,
                                       const torch::Tensor& dst, torch::nn::Linear& f,
                                       torch::nn::Linear& g) {
  torch::Tensor h = h0;
  for (int r = 0; r < config_.rounds; ++r) {
    torch::Tensor msg = torch::relu(f(h)).index_select(0, src);
    torch::Tensor agg = torch::zeros_like(h).index_add(0, dst, msg);
    h = h0 + torch::relu(g(agg));
  }
  return h;
}

torch::Tensor PolicyNetImpl::sweep(const torch::Tensor& h0,
                                   const std::vector<GraphTensors::Level>& levels,
                                   torch::nn::Linear& f, torch::nn::Linear& g) {
  // Sources (level 0) keep h = T(x) + g(0); each later level reads finished lower levels.
  torch::Tensor h = h0 + torch::relu(g(torch::zeros_like(h0)));
  for (const auto& level : levels) {
    torch::Tensor msg = torch::relu(f(h.index_select(0, level.edge_src)));
    torch::Tensor agg = torch::zeros({level.nodes.size(0), h.size(1), h.size(2)})
                            .index_add(0, level.edge_local_dst, msg);
    torch::Tensor upd = h0.index_select(0, level.nodes) + torch::relu(g(agg));
    h = h.index_copy(0, level.nodes, upd);
  }
  return h;
}

torch::Tensor PolicyNetImpl::embed_node_major(const torch::Tensor& x, const GraphTensors& gt) {
  const int64_t nodes_width = node_feature_width(config_.features, config_.num_devices);
  torch::Tensor xn = x.size(2) == nodes_width ? x : x.narrow(2, 0, nodes_width);
  torch::Tensor h0 = torch::relu(node_transform(xn.transpose(0, 1)));  // [N, T, H]
  torch::Tensor hf, hb;
  if (config_.message_passing == MessagePassing::kRadial) {
    hf = propagate(h0, gt.src, gt.dst, f_fwd, g_fwd);
    hb = propagate(h0, gt.dst, gt.src, f_bwd, g_bwd);
  } else if (config_.message_passing == MessagePassing::kSweep) {
    hf = sweep(h0, gt.fwd_levels, f_fwd, g_fwd);
    hb = sweep(h0, gt.bwd_levels, f_bwd, g_bwd);
  } else {
    hf = h0;
    hb = h0;
  }
  return torch::cat({hf, hb}, 2);  // [N, T, 2H]
}

torch::Tensor PolicyNetImpl::embed(const torch::Tensor& x, const GraphTensors& gt) {
  return embed_node_major(x, gt).transpose(0, 1);
}

torch::Tensor PolicyNetImpl::forward(const torch::Tensor& x, const torch::Tensor& current,
                                     const GraphTensors& gt) {
  return logits_and_value(x, current, gt, nullptr);
}

std::pair<torch::Tensor, torch::Tensor> PolicyNetImpl::forward_with_value(
    const torch::Tensor& x, const torch::Tensor& current, const GraphTensors& gt) {
  PLACETO_CHECK(config_.value_head);
  torch::Tensor values;
  torch::Tensor logits = logits_and_value(x, current, gt, &values);
  return {logits, values};
}

torch::Tensor PolicyNetImpl::logits_and_value(const torch::Tensor& x, const torch::Tensor& current,
                                              const GraphTensors& gt, torch::Tensor* values) {
  const int64_t base = node_feature_width(config_.features, config_.num_devices);
  const int64_t k = lookahead_width_per_device(config_.features);
  int64_t d = config_.num_devices;
  if (config_.features.any_devices && x.dim() == 3 && x.size(2) > base &&
      (x.size(2) - base) % k == 0)
    d = (x.size(2) - base) / k;
  const int64_t width = feature_width(static_cast<int>(d));
  if (x.dim() != 3 || x.size(2) != width)
    throw InputError(config_.features.any_devices
                         ? "the policy's features are " + std::to_string(base) +
                               " node columns and " + std::to_string(k) +
                               " per device, but it was given width " +
                               std::to_string(x.dim() == 3 ? x.size(2) : -1)
                         : "the policy was trained for " + std::to_string(config_.num_devices) +
                               " devices (feature width " + std::to_string(width) +
                               ") but was given features of width " +
                               std::to_string(x.dim() == 3 ? x.size(2) : -1));
  const int64_t t = x.size(0);
  torch::Tensor z = embed_node_major(x, gt);                     // [N, T, 2H]
  torch::Tensor anc = gt.ancestors.index_select(0, current);     // [T, N]
  torch::Tensor desc = gt.descendants.index_select(0, current);  // [T, N]
  // The three pools are one batched matrix product: row-normalised masks [T, 3, N] times the
  // step-major embeddings [T, N, 2H] give the three means [T, 3, 2H].
  std::vector<torch::Tensor> masks{anc, desc};
  if (config_.parallel_aggregation) {
    torch::Tensor self = torch::one_hot(current, gt.num_nodes).to(torch::kFloat);
    torch::Tensor par = (1.0 - anc - desc - self).clamp_min(0.0);
    if (config_.parallel_k > 0 && config_.parallel_k < gt.num_nodes) {
      // Keep the k parallel nodes closest in start time (feature column 4 is the signed
      // start-time difference to the current node).
      torch::Tensor dist = x.select(2, 4).abs() + (1.0 - par) * 1e9;
      torch::Tensor idx = std::get<1>(dist.topk(config_.parallel_k, 1, /*largest=*/false));
      par = torch::zeros_like(par).scatter(1, idx, 1.0) * par;
    }
    masks.push_back(par);
  }
  torch::Tensor m = torch::stack(masks, 1);  // [T, P, N]
  m = m / m.sum(2, true).clamp_min(1.0);
  torch::Tensor pooled = torch::bmm(m, z.transpose(0, 1));  // [T, P, 2H]
  torch::Tensor parts_p = torch::relu(agg_parents(pooled.select(1, 0)));
  torch::Tensor parts_c = torch::relu(agg_children(pooled.select(1, 1)));
  torch::Tensor parts_par = config_.parallel_aggregation
                                ? torch::relu(agg_parallel(pooled.select(1, 2)))
                                : torch::zeros({t, config_.hidden});
  torch::Tensor own = z.index({current, torch::arange(t)});  // [T, 2H]
  torch::Tensor feat = torch::cat({parts_p, parts_c, parts_par, own}, 1);
  if (values) {
    torch::Tensor graph = z.mean(0);  // [T, 2H]
    *values = value_out(torch::relu(value_hidden(torch::cat({graph, own}, 1)))).squeeze(1);
  }
  torch::Tensor context = torch::relu(classifier_hidden(feat));  // [T, H]
  torch::Tensor per_device;                                      // [T, D, H]
  if (config_.features.lookahead) {
    torch::Tensor rows = x.index({torch::arange(t), current});               // [T, F]
    torch::Tensor what_if = rows.narrow(1, base, k * d).reshape({t, d, k});  // [T, D, K]
    per_device = torch::relu(lookahead_hidden(what_if));
  }
  if (config_.features.any_devices) {
    torch::Tensor pair =
        torch::cat({context.unsqueeze(1).expand({t, d, config_.hidden}), per_device}, 2);
    return device_out(torch::relu(device_mix(pair))).squeeze(2);  // [T, D]
  }
  torch::Tensor logits = classifier_out(context);
  if (config_.features.lookahead) logits = logits + lookahead_out(per_device).squeeze(2);
  return logits;
}

std::vector<std::pair<std::string, torch::Tensor>> named_parameters_sorted(PolicyNet& net) {
  std::vector<std::pair<std::string, torch::Tensor>> out;
  for (const auto& item : net->named_parameters(true)) out.emplace_back(item.key(), item.value());
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  return out;
}

}  // namespace placeto
