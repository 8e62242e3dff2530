#include "sim/graph.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "common/error.h"

namespace placeto {

NodeId Graph::find(const std::string& node_name) const {
  auto it = index_.find(node_name);
  return it == index_.end() ? -1 : it->second;
}

NodeId GraphBuilder::add_node(const std::string& name, const std::string& op, double cost_us,
                              std::vector<int64_t> out_bytes, int64_t param_bytes) {
  const std::string field = "node " + quoted_name(name);
  if (name.empty()) throw_input_error(source_, "nodes", "a node has an empty name");
  if (!std::isfinite(cost_us) || cost_us < 0 || cost_us > kMaxOpCostUs)
    throw_input_error(source_, field + ".cost_us",
                      "must be a finite number in [0, 1e12], got " + std::to_string(cost_us));
  for (size_t i = 0; i < out_bytes.size(); ++i)
    if (out_bytes[i] < 0 || out_bytes[i] > kMaxTensorBytes)
      throw_input_error(source_, field + ".out_bytes[" + std::to_string(i) + "]",
                        "must be in [0, 2^50], got " + std::to_string(out_bytes[i]));
  if (param_bytes < 0 || param_bytes > kMaxTensorBytes)
    throw_input_error(source_, field + ".param_bytes",
                      "must be in [0, 2^50], got " + std::to_string(param_bytes));
  // Each term is at most 2^50, so the running total cannot overflow before it passes 2^62.
  total_bytes_ += param_bytes;
  for (int64_t b : out_bytes) {
    total_bytes_ += b;
    if (total_bytes_ > kMaxGraphBytes)
      throw_input_error(source_, field + ".out_bytes",
                        "the graph's tensors and parameters add up to more than 2^62 bytes");
  }
  if (total_bytes_ > kMaxGraphBytes)
    throw_input_error(source_, field + ".param_bytes",
                      "the graph's tensors and parameters add up to more than 2^62 bytes");
  NodeId id = static_cast<NodeId>(g_.node_names_.size());
  if (!g_.index_.emplace(name, id).second)
    throw_input_error(source_, field, "duplicate node name " + quoted_name(name));
  g_.node_names_.push_back(name);
  g_.op_types_.push_back(op);
  g_.cost_us_.push_back(cost_us);
  g_.param_bytes_.push_back(param_bytes);
  outs_.push_back(std::move(out_bytes));
  return id;
}

EdgeId GraphBuilder::add_edge(const std::string& src, const std::string& dst, int out,
                              const std::string& field) {
  const std::string where =
      field.empty() ? "edge " + quoted_name(src) + " -> " + quoted_name(dst) : field;
  NodeId s = g_.find(src);
  if (s < 0) throw_input_error(source_, where + ".src", "unknown node " + quoted_name(src));
  NodeId d = g_.find(dst);
  if (d < 0) throw_input_error(source_, where + ".dst", "unknown node " + quoted_name(dst));
  return add_edge(s, d, out, where);
}

EdgeId GraphBuilder::add_edge(NodeId s, NodeId d, int out, const std::string& field) {
  const int n = num_nodes();
  PLACETO_CHECK(s >= 0 && s < n && d >= 0 && d < n);
  const std::string where = field.empty() ? "edge " + quoted_name(g_.node_names_[s]) + " -> " +
                                                quoted_name(g_.node_names_[d])
                                          : field;
  if (out < 0)
    throw_input_error(source_, where + ".out", "must be >= 0, got " + std::to_string(out));
  if (s == d)
    throw_input_error(
        source_, where,
        "self-loop on op " + quoted_name(g_.node_names_[s]) + " (the graph must be acyclic)");
  uint64_t key = (static_cast<uint64_t>(s) << 32) | static_cast<uint32_t>(d);
  EdgeId id = static_cast<EdgeId>(g_.edge_src_.size());
  if (!edge_index_.emplace(key, id).second)
    throw_input_error(source_, where,
                      "duplicate edge " + quoted_name(g_.node_names_[s]) + " -> " +
                          quoted_name(g_.node_names_[d]));
  g_.edge_src_.push_back(s);
  g_.edge_dst_.push_back(d);
  g_.edge_out_.push_back(out);
  return id;
}

Graph GraphBuilder::build() {
  Graph& g = g_;
  const int n = g.num_nodes();
  const int m = g.num_edges();
  g.out_offset_.assign(n + 1, 0);
  g.total_out_bytes_.assign(n, 0);
  g.out_bytes_.clear();
  for (int v = 0; v < n; ++v) {
    g.out_offset_[v + 1] = g.out_offset_[v] + static_cast<int32_t>(outs_[v].size());
    for (int64_t b : outs_[v]) {
      g.out_bytes_.push_back(b);
      g.total_out_bytes_[v] += b;
    }
  }
  // CSR adjacency; a stable counting sort keeps file order within each node.
  g.child_offset_.assign(n + 1, 0);
  g.parent_offset_.assign(n + 1, 0);
  for (int e = 0; e < m; ++e) {
    ++g.child_offset_[g.edge_src_[e] + 1];
    ++g.parent_offset_[g.edge_dst_[e] + 1];
  }
  for (int v = 0; v < n; ++v) {
    g.child_offset_[v + 1] += g.child_offset_[v];
    g.parent_offset_[v + 1] += g.parent_offset_[v];
  }
  g.child_edges_.assign(m, 0);
  g.parent_edges_.assign(m, 0);
  {
    std::vector<int32_t> cpos(g.child_offset_.begin(), g.child_offset_.end() - 1);
    std::vector<int32_t> ppos(g.parent_offset_.begin(), g.parent_offset_.end() - 1);
    for (int e = 0; e < m; ++e) {
      g.child_edges_[cpos[g.edge_src_[e]]++] = e;
      g.parent_edges_[ppos[g.edge_dst_[e]]++] = e;
    }
  }
  // Topological order (Kahn, FIFO in file order).
  std::vector<int32_t> indeg(n);
  for (int v = 0; v < n; ++v) indeg[v] = g.in_degree(v);
  g.topo_order_.clear();
  g.topo_order_.reserve(n);
  for (int v = 0; v < n; ++v)
    if (indeg[v] == 0) g.topo_order_.push_back(v);
  for (size_t head = 0; head < g.topo_order_.size(); ++head) {
    NodeId v = g.topo_order_[head];
    for (int i = g.child_begin(v); i < g.child_end(v); ++i) {
      NodeId c = g.edge_dst_[g.child_edges_[i]];
      if (--indeg[c] == 0) g.topo_order_.push_back(c);
    }
  }
  if (static_cast<int>(g.topo_order_.size()) != n) {
    // Walk back along unfinished parents until a node repeats: it lies on a cycle.
    NodeId v = 0;
    while (indeg[v] == 0) ++v;
    std::vector<char> seen(n, 0);
    while (!seen[v]) {
      seen[v] = 1;
      for (int i = g.parent_begin(v); i < g.parent_end(v); ++i) {
        NodeId p = g.edge_src_[g.parent_edges_[i]];
        if (indeg[p] > 0) {
          v = p;
          break;
        }
      }
    }
    throw_input_error(source_, "edges",
                      "the graph has a cycle through op " + quoted_name(g.node_names_[v]));
  }
  // Byte-order ranks of names.
  std::vector<NodeId> by_name(n);
  std::iota(by_name.begin(), by_name.end(), 0);
  std::sort(by_name.begin(), by_name.end(),
            [&](NodeId a, NodeId b) { return g.node_names_[a] < g.node_names_[b]; });
  g.name_rank_.assign(n, 0);
  for (int i = 0; i < n; ++i) g.name_rank_[by_name[i]] = i;
  // Aggregates.
  g.total_cost_us_ = 0;
  std::vector<double> finish(n, 0.0);
  g.critical_path_us_ = 0;
  for (NodeId v : g.topo_order_) {
    g.total_cost_us_ += g.cost_us_[v];
    double start = 0;
    for (int i = g.parent_begin(v); i < g.parent_end(v); ++i)
      start = std::max(start, finish[g.edge_src_[g.parent_edges_[i]]]);
    finish[v] = start + g.cost_us_[v];
    g.critical_path_us_ = std::max(g.critical_path_us_, finish[v]);
  }
  Graph out = std::move(g_);
  g_ = Graph();
  outs_.clear();
  edge_index_.clear();
  return out;
}

void validate_placement(const Graph& g, const Placement& p, const std::string& source) {
  if (p.num_devices <= 0)
    throw_input_error(source, "devices", "must be >= 1, got " + std::to_string(p.num_devices));
  if (static_cast<int>(p.device.size()) != g.num_nodes())
    throw_input_error(source, "placement",
                      "has " + std::to_string(p.device.size()) + " entries for a graph of " +
                          std::to_string(g.num_nodes()) + " ops");
  for (int v = 0; v < g.num_nodes(); ++v)
    if (p.device[v] < 0 || p.device[v] >= p.num_devices)
      throw_input_error(source, "placement." + quoted_name(g.node_name(v)),
                        "device " + std::to_string(p.device[v]) + " is out of range [0, " +
                            std::to_string(p.num_devices) + ")");
}

}  // namespace placeto
