// The computation graph of one training step: ops with compute costs and output tensors,
// and edges that carry one output of a parent to a child.
//
// A Graph is immutable once built and compact: names are interned, adjacency is stored as
// CSR arrays (children in file edge order, which the simulator depends on), a topological
// order and the byte-order rank of every name are precomputed.  Graphs are built with
// GraphBuilder, which validates everything.  Thread-safe for concurrent reads.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace placeto {

using NodeId = int32_t;
using EdgeId = int32_t;

class Graph {
 public:
  Graph() = default;

  const std::string& name() const { return name_; }
  int num_nodes() const { return static_cast<int>(node_names_.size()); }
  int num_edges() const { return static_cast<int>(edge_src_.size()); }

  const std::string& node_name(NodeId v) const { return node_names_[v]; }
  const std::string& op_type(NodeId v) const { return op_types_[v]; }
  double cost_us(NodeId v) const { return cost_us_[v]; }
  int64_t param_bytes(NodeId v) const { return param_bytes_[v]; }
  // Output tensors of v; an index past the end is a valid reference to a 0-byte tensor.
  int num_outputs(NodeId v) const { return out_offset_[v + 1] - out_offset_[v]; }
  int64_t out_bytes(NodeId v, int index) const {
    return index < num_outputs(v) ? out_bytes_[out_offset_[v] + index] : 0;
  }
  int64_t total_out_bytes(NodeId v) const { return total_out_bytes_[v]; }

  // Edges, in the order they were added (file order).
  NodeId edge_src(EdgeId e) const { return edge_src_[e]; }
  NodeId edge_dst(EdgeId e) const { return edge_dst_[e]; }
  int edge_out(EdgeId e) const { return edge_out_[e]; }
  int64_t edge_bytes(EdgeId e) const { return out_bytes(edge_src_[e], edge_out_[e]); }

  // Outgoing edges of v in file order: child_edges()[child_begin(v) .. child_end(v)).
  int child_begin(NodeId v) const { return child_offset_[v]; }
  int child_end(NodeId v) const { return child_offset_[v + 1]; }
  const std::vector<EdgeId>& child_edges() const { return child_edges_; }
  // Incoming edges of v in file order.
  int parent_begin(NodeId v) const { return parent_offset_[v]; }
  int parent_end(NodeId v) const { return parent_offset_[v + 1]; }
  const std::vector<EdgeId>& parent_edges() const { return parent_edges_; }
  int in_degree(NodeId v) const { return parent_end(v) - parent_begin(v); }
  int out_degree(NodeId v) const { return child_end(v) - child_begin(v); }

  // A topological order (Kahn's algorithm, ties broken by file order).
  const std::vector<NodeId>& topo_order() const { return topo_order_; }
  // Position of each node's name in byte-wise sorted order of all names.
  int32_t name_rank(NodeId v) const { return name_rank_[v]; }

  // Returns -1 when no node has that name.
  NodeId find(const std::string& node_name) const;

  double total_cost_us() const { return total_cost_us_; }
  // Longest path by compute cost alone (no transfers, no gaps).
  double critical_path_us() const { return critical_path_us_; }

 private:
  friend class GraphBuilder;
  std::string name_;
  std::vector<std::string> node_names_;
  std::vector<std::string> op_types_;
  std::vector<double> cost_us_;
  std::vector<int64_t> param_bytes_;
  std::vector<int32_t> out_offset_;
  std::vector<int64_t> out_bytes_;
  std::vector<int64_t> total_out_bytes_;
  std::vector<NodeId> edge_src_, edge_dst_;
  std::vector<int32_t> edge_out_;
  std::vector<int32_t> child_offset_, parent_offset_;
  std::vector<EdgeId> child_edges_, parent_edges_;
  std::vector<NodeId> topo_order_;
  std::vector<int32_t> name_rank_;
  std::unordered_map<std::string, NodeId> index_;
  double total_cost_us_ = 0;
  double critical_path_us_ = 0;
};

// Limits that keep every sum the simulator forms finite and exact (int64 bytes, double
// microseconds), whatever a file says: an op of more than 10^12 us (11.6 days) or a tensor of
// more than 2^50 bytes (1 PiB) is a units mistake, not a model.
constexpr double kMaxOpCostUs = 1e12;
constexpr int64_t kMaxTensorBytes = int64_t{1} << 50;
// Over the whole graph: outputs plus parameters, so that per-device sums cannot overflow.
constexpr int64_t kMaxGraphBytes = int64_t{1} << 62;

// Builds and validates a Graph.  `source` (usually a file name) prefixes every error.
// Errors (InputError): duplicate node names, unknown endpoints, duplicate (src, dst) edges,
// cycles (an op on the cycle is named), negative or non-finite costs, negative sizes, and
// costs or sizes past the limits above.
class GraphBuilder {
 public:
  explicit GraphBuilder(std::string source = "graph") : source_(std::move(source)) {}

  void set_name(std::string name) { g_.name_ = std::move(name); }
  NodeId add_node(const std::string& name, const std::string& op, double cost_us,
                  std::vector<int64_t> out_bytes, int64_t param_bytes = 0);
  // `field` names the edge in errors (e.g. "edges[7]").
  EdgeId add_edge(const std::string& src, const std::string& dst, int out = 0,
                  const std::string& field = "");
  EdgeId add_edge(NodeId src, NodeId dst, int out = 0, const std::string& field = "");
  NodeId find(const std::string& name) const { return g_.find(name); }
  int num_nodes() const { return g_.num_nodes(); }

  // Finishes the graph (CSR, topological order, ranks).  The builder is left empty.
  Graph build();

 private:
  std::string source_;
  Graph g_;
  std::vector<std::vector<int64_t>> outs_;
  std::unordered_map<uint64_t, EdgeId> edge_index_;
  int64_t total_bytes_ = 0;
};

// A device for every op.  `device[v]` is in [0, num_devices).
struct Placement {
  int num_devices = 0;
  std::vector<int32_t> device;

  Placement() = default;
  Placement(int d, int num_nodes, int32_t fill = 0) : num_devices(d), device(num_nodes, fill) {}
  bool operator==(const Placement& o) const {
    return num_devices == o.num_devices && device == o.device;
  }
};

// Throws InputError unless `p` places every node of `g` on a device in range.
void validate_placement(const Graph& g, const Placement& p, const std::string& source);

}  // namespace placeto
