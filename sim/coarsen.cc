#include "sim/coarsen.h"

#include <algorithm>
#include <map>
#include <queue>
#include <set>
#include <unordered_map>

#include "common/error.h"

namespace placeto {

namespace {

// The group graph during contraction: weighted adjacency both ways, costs, and a version per
// group that invalidates stale queue entries.
class Contraction {
 public:
  explicit Contraction(const Graph& g) : n_(g.num_nodes()) {
    out_.resize(n_);
    in_.resize(n_);
    cost_.resize(n_);
    alive_.assign(n_, 1);
    version_.assign(n_, 0);
    parent_.resize(n_);
    for (NodeId v = 0; v < n_; ++v) {
      parent_[v] = v;
      cost_[v] = g.cost_us(v);
    }
    // A tensor counts once per consuming op's node; bytes + 1 so zero-byte control edges still
    // attract their endpoints a little.
    for (EdgeId e = 0; e < g.num_edges(); ++e) {
      const double w = static_cast<double>(g.edge_bytes(e)) + 1.0;
      out_[g.edge_src(e)][g.edge_dst(e)] += w;
      in_[g.edge_dst(e)][g.edge_src(e)] += w;
    }
    groups_ = n_;
  }

  int groups() const { return groups_; }
  int find(int v) {
    while (parent_[v] != v) v = parent_[v] = parent_[parent_[v]];
    return v;
  }
  bool alive(int a) const { return alive_[a]; }
  uint32_t version(int a) const { return version_[a]; }
  double cost(int a) const { return cost_[a]; }
  const std::unordered_map<int, double>& out(int a) const { return out_[a]; }
  const std::unordered_map<int, double>& in(int a) const { return in_[a]; }

  // True if some path a -> x -> ... -> b exists besides a direct edge a -> b.
  bool other_path(int a, int b) {
    ++stamp_;
    if (mark_.size() < static_cast<size_t>(n_)) mark_.assign(n_, 0);
    stack_.clear();
    for (const auto& [x, w] : out_[a])
      if (x != b) {
        mark_[x] = stamp_;
        stack_.push_back(x);
      }
    while (!stack_.empty()) {
      const int x = stack_.back();
      stack_.pop_back();
      if (x == b) return true;
      for (const auto& [y, w] : out_[x])
        if (mark_[y] != stamp_) {
          mark_[y] = stamp_;
          stack_.push_back(y);
        }
    }
    return false;
  }

  // Merges b into a.  REQUIRES: the result is acyclic.
  void merge(int a, int b) {
    for (const auto& [x, w] : out_[b]) {
      in_[x].erase(b);
      if (x == a) continue;
      out_[a][x] += w;
      in_[x][a] += w;
    }
    for (const auto& [x, w] : in_[b]) {
      out_[x].erase(b);
      if (x == a) continue;
      in_[a][x] += w;
      out_[x][a] += w;
    }
    out_[a].erase(b);
    in_[a].erase(b);
    out_[b].clear();
    in_[b].clear();
    cost_[a] += cost_[b];
    alive_[b] = 0;
    parent_[b] = a;
    ++version_[a];
    ++version_[b];
    --groups_;
  }

 private:
  int n_;
  int groups_;
  std::vector<std::unordered_map<int, double>> out_, in_;
  std::vector<double> cost_;
  std::vector<char> alive_;
  std::vector<uint32_t> version_;
  std::vector<int> parent_;
  std::vector<uint32_t> mark_;
  uint32_t stamp_ = 0;
  std::vector<int> stack_;
};

// Heavy edges between cheap groups first: a group runs as one op, so merging expensive ops
// loses more parallelism than merging cheap ones (measured in docs/FAMILIES.md).
double score(double weight, double cost_a, double cost_b, double scale) {
  return weight / (cost_a + cost_b + scale);
}

struct Candidate {
  double weight;
  int a, b;  // edge a -> b
  uint32_t va, vb;
  bool operator<(const Candidate& o) const {  // max-heap on weight, then smallest ids
    if (weight != o.weight) return weight < o.weight;
    if (a != o.a) return a > o.a;
    return b > o.b;
  }
};

// Group ids of the live groups renumbered 0..k-1 in a topological order of the groups.
std::vector<int32_t> dense_groups(const Graph& g, Contraction& c) {
  const int n = g.num_nodes();
  std::vector<int32_t> raw(n);
  for (int v = 0; v < n; ++v) raw[v] = c.find(v);
  return raw;
}

// Renumbers arbitrary group labels to 0..k-1 in a topological order of the group graph
// (Kahn's algorithm, ties by the smallest original op).  Returns k, or -1 if cyclic.
int topo_renumber(const Graph& g, std::vector<int32_t>* group) {
  const int n = g.num_nodes();
  std::map<int32_t, int> index;
  for (int v = 0; v < n; ++v) index.emplace((*group)[v], 0);
  int k = 0;
  for (auto& [label, i] : index) i = k++;
  std::vector<int> first(k, n);
  std::vector<int32_t> gid(n);
  for (int v = 0; v < n; ++v) {
    gid[v] = index[(*group)[v]];
    first[gid[v]] = std::min(first[gid[v]], v);
  }
  std::vector<std::set<int>> succ(k);
  std::vector<int> indeg(k, 0);
  for (EdgeId e = 0; e < g.num_edges(); ++e) {
    const int a = gid[g.edge_src(e)], b = gid[g.edge_dst(e)];
    if (a != b && succ[a].insert(b).second) ++indeg[b];
  }
  std::priority_queue<std::pair<int, int>, std::vector<std::pair<int, int>>, std::greater<>> ready;
  for (int a = 0; a < k; ++a)
    if (indeg[a] == 0) ready.push({first[a], a});
  std::vector<int> order_of(k, -1);
  int next = 0;
  while (!ready.empty()) {
    const int a = ready.top().second;
    ready.pop();
    order_of[a] = next++;
    for (int b : succ[a])
      if (--indeg[b] == 0) ready.push({first[b], b});
  }
  if (next != k) return -1;
  for (int v = 0; v < n; ++v) (*group)[v] = order_of[gid[v]];
  return k;
}

// The contraction over the whole graph (coarsen() below kWindowOps ops).  With `label` (one
// per op), only ops of equal labels share a group, and the result may keep more than
// max_nodes groups when no two groups of one label can merge.
CoarseGraph coarsen_whole(const Graph& g, int max_nodes,
                          const std::vector<int32_t>* label = nullptr) {
  PLACETO_CHECK_GE(max_nodes, 1);
  auto apart = [&](int a, int b) { return label && (*label)[a] != (*label)[b]; };
  const int n = g.num_nodes();
  Contraction c(g);
  double cap = g.total_cost_us() / max_nodes;
  const double scale = 1e-3 * g.total_cost_us() / std::max(n, 1) + 1e-9;
  while (c.groups() > max_nodes) {
    // Contract the heaviest edges whose groups fit under the cost cap.
    std::priority_queue<Candidate> queue;
    for (int a = 0; a < n; ++a)
      if (c.alive(a))
        for (const auto& [b, w] : c.out(a))
          queue.push({score(w, c.cost(a), c.cost(b), scale), a, b, c.version(a), c.version(b)});
    bool merged = false;
    while (!queue.empty() && c.groups() > max_nodes) {
      Candidate cand = queue.top();
      queue.pop();
      if (!c.alive(cand.a) || !c.alive(cand.b) || c.version(cand.a) != cand.va ||
          c.version(cand.b) != cand.vb)
        continue;
      if (apart(cand.a, cand.b)) continue;
      if (c.cost(cand.a) + c.cost(cand.b) > cap) continue;
      if (c.other_path(cand.a, cand.b)) continue;
      c.merge(cand.a, cand.b);
      merged = true;
      for (const auto& [x, w] : c.out(cand.a))
        queue.push({score(w, c.cost(cand.a), c.cost(x), scale), cand.a, x, c.version(cand.a),
                    c.version(x)});
      for (const auto& [y, w] : c.in(cand.a))
        queue.push({score(w, c.cost(y), c.cost(cand.a), scale), y, cand.a, c.version(y),
                    c.version(cand.a)});
    }
    if (c.groups() <= max_nodes) break;
    if (!merged && cap >= g.total_cost_us()) {
      // No edge can be contracted: merge the two consecutive groups of a topological order
      // with the smallest combined cost (consecutive groups have no path between them other
      // than a direct edge, so the result stays acyclic).
      std::vector<int32_t> labels = dense_groups(g, c);
      const int k = topo_renumber(g, &labels);
      PLACETO_CHECK_GT(k, 1);
      std::vector<int> rep(k, -1);
      for (int v = 0; v < n; ++v)
        if (rep[labels[v]] < 0) rep[labels[v]] = c.find(v);
      int best = -1;
      for (int i = 0; i + 1 < k; ++i)
        if (!apart(rep[i], rep[i + 1]) &&
            (best < 0 ||
             c.cost(rep[i]) + c.cost(rep[i + 1]) < c.cost(rep[best]) + c.cost(rep[best + 1])))
          best = i;
      if (best < 0) break;  // every pair of consecutive groups has two labels
      c.merge(rep[best], rep[best + 1]);
    }
    if (!merged) cap *= 2;
  }
  std::vector<int32_t> group = dense_groups(g, c);
  const int k = topo_renumber(g, &group);
  PLACETO_CHECK_GT(k, 0);
  return build_coarse_graph(g, group, k);
}

// The ops at positions [lo, hi) of g's topological order as a graph of their own (node i is
// order[lo + i]), with the edges between them.
Graph window_graph(const Graph& g, int lo, int hi) {
  const auto& order = g.topo_order();
  std::vector<int> local(static_cast<size_t>(g.num_nodes()), -1);
  GraphBuilder b(g.name());
  for (int i = lo; i < hi; ++i) {
    const NodeId v = order[i];
    local[v] = i - lo;
    std::vector<int64_t> outs(static_cast<size_t>(g.num_outputs(v)));
    for (int k = 0; k < g.num_outputs(v); ++k) outs[k] = g.out_bytes(v, k);
    b.add_node(std::to_string(i - lo), g.op_type(v), g.cost_us(v), std::move(outs),
               g.param_bytes(v));
  }
  for (int i = lo; i < hi; ++i) {
    const NodeId v = order[i];
    for (int c = g.child_begin(v); c < g.child_end(v); ++c) {
      const EdgeId e = g.child_edges()[c];
      const int t = local[g.edge_dst(e)];
      if (t >= 0) b.add_edge(local[v], t, g.edge_out(e));
    }
  }
  return b.build();
}

}  // namespace

namespace {

// One level of coarsen() above kCoarsenWindowOps ops: windows of the topological order, each
// contracted on its own.  Every edge between two windows goes forward in the order, so no
// path can leave a window and come back, and the groups of all windows together stay
// acyclic.  Each window gets its share of max_nodes by op count (at least one group).
// Returns one group id per op.
std::vector<int32_t> coarsen_windows(const Graph& g, int max_nodes, int* groups,
                                     const std::vector<int32_t>* label) {
  const int n = g.num_nodes();
  const int windows = std::min(max_nodes, (n + kCoarsenWindowOps - 1) / kCoarsenWindowOps);
  std::vector<int32_t> group(static_cast<size_t>(n));
  const auto& order = g.topo_order();
  int32_t next = 0;
  for (int w = 0; w < windows; ++w) {
    const int lo = static_cast<int>(static_cast<int64_t>(w) * n / windows);
    const int hi = static_cast<int>(static_cast<int64_t>(w + 1) * n / windows);
    const int share =
        std::max(1, static_cast<int>(static_cast<int64_t>(max_nodes) * (hi - lo) / n));
    std::vector<int32_t> part_label;
    if (label)
      for (int i = lo; i < hi; ++i) part_label.push_back((*label)[order[i]]);
    const CoarseGraph part =
        coarsen_whole(window_graph(g, lo, hi), share, label ? &part_label : nullptr);
    for (int i = lo; i < hi; ++i) group[order[i]] = next + part.group[i - lo];
    next += part.graph.num_nodes();
  }
  *groups = next;
  return group;
}

}  // namespace

CoarseGraph coarsen(const Graph& g, int max_nodes, const std::vector<int32_t>* label) {
  PLACETO_CHECK_GE(max_nodes, 1);
  const int n = g.num_nodes();
  if (label) PLACETO_CHECK_EQ(label->size(), static_cast<size_t>(n));
  if (n <= kCoarsenWindowOps || max_nodes >= n) return coarsen_whole(g, max_nodes, label);
  // Multilevel: each level shrinks the graph of the level before by at most
  // kCoarsenLevelFactor, window by window, until the whole graph fits one window; then one
  // contraction of the whole to max_nodes.  Group ids compose across the levels.
  std::vector<int32_t> group(static_cast<size_t>(n));
  for (int v = 0; v < n; ++v) group[v] = v;
  CoarseGraph level{g, group};
  std::vector<int32_t> level_label;
  if (label) level_label = *label;
  while (level.graph.num_nodes() > max_nodes) {
    const int m = level.graph.num_nodes();
    const std::vector<int32_t>* lab = label ? &level_label : nullptr;
    CoarseGraph next;
    if (m <= kCoarsenWindowOps) {
      next = coarsen_whole(level.graph, max_nodes, lab);
    } else {
      int k = 0;
      const std::vector<int32_t> ids =
          coarsen_windows(level.graph, std::max(max_nodes, m / kCoarsenLevelFactor), &k, lab);
      next = build_coarse_graph(level.graph, ids, k);
    }
    if (label) {
      std::vector<int32_t> next_label(static_cast<size_t>(next.graph.num_nodes()));
      for (int v = 0; v < m; ++v) next_label[next.group[v]] = level_label[v];
      level_label = std::move(next_label);
    }
    for (int32_t& x : group) x = next.group[x];
    const bool stuck = next.graph.num_nodes() == m;  // labels allow no merge
    level = std::move(next);
    if (stuck) break;
  }
  return build_coarse_graph(g, group, level.graph.num_nodes());
}

CoarseGraph chunk_topological(const Graph& g, int k) {
  PLACETO_CHECK_GE(k, 1);
  const int n = g.num_nodes();
  k = std::min(k, std::max(n, 1));
  std::vector<int32_t> group(n);
  const auto& order = g.topo_order();
  for (int i = 0; i < n; ++i)
    group[order[i]] = static_cast<int32_t>(static_cast<int64_t>(i) * k / n);
  return build_coarse_graph(g, group, k);
}

CoarseGraph build_coarse_graph(const Graph& g, const std::vector<int32_t>& group_in, int k) {
  const int n = g.num_nodes();
  PLACETO_CHECK_EQ(static_cast<int>(group_in.size()), n);
  std::vector<int32_t> group = group_in;
  for (int v = 0; v < n; ++v) PLACETO_CHECK(group[v] >= 0 && group[v] < k);
  if (topo_renumber(g, &group) != k)
    throw InputError("graph '" + g.name() + "': the grouping has a cycle between groups, or " +
                     "leaves a group empty");
  // Cut tensors: (op, output) -> groups that read it from elsewhere.
  std::map<std::pair<NodeId, int>, std::set<int32_t>> readers;
  for (EdgeId e = 0; e < g.num_edges(); ++e) {
    const NodeId s = g.edge_src(e), t = g.edge_dst(e);
    if (group[s] != group[t]) readers[{s, g.edge_out(e)}].insert(group[t]);
  }
  // Per (src group, dst group): the set of tensors it carries.
  std::map<std::pair<int32_t, int32_t>, std::vector<std::pair<NodeId, int>>> carried;
  for (const auto& [tensor, groups] : readers)
    for (int32_t b : groups) carried[{group[tensor.first], b}].push_back(tensor);
  // Outputs of each group: one per distinct carried set, in order of first use.
  std::vector<std::vector<std::vector<std::pair<NodeId, int>>>> outputs(k);
  std::vector<std::tuple<int32_t, int32_t, int>> edges;
  for (const auto& [pair, tensors] : carried) {
    auto& outs = outputs[pair.first];
    int idx = static_cast<int>(std::find(outs.begin(), outs.end(), tensors) - outs.begin());
    if (idx == static_cast<int>(outs.size())) outs.push_back(tensors);
    edges.emplace_back(pair.first, pair.second, idx);
  }
  std::vector<double> cost(k, 0.0);
  std::vector<int64_t> params(k, 0);
  std::vector<NodeId> first(k, -1);
  std::vector<int> size(k, 0);
  for (NodeId v : g.topo_order()) {
    cost[group[v]] += g.cost_us(v);
    params[group[v]] += g.param_bytes(v);
    if (first[group[v]] < 0) first[group[v]] = v;
    ++size[group[v]];
  }
  GraphBuilder b(g.name() + "_coarse");
  b.set_name(g.name() + "_coarse" + std::to_string(k));
  for (int a = 0; a < k; ++a) {
    std::vector<int64_t> out_bytes;
    for (const auto& tensors : outputs[a]) {
      int64_t bytes = 0;
      for (const auto& [v, o] : tensors) bytes += g.out_bytes(v, o);
      out_bytes.push_back(bytes);
    }
    b.add_node("g" + std::to_string(a) + ":" + g.node_name(first[a]) +
                   (size[a] > 1 ? "+" + std::to_string(size[a] - 1) : ""),
               size[a] == 1 ? g.op_type(first[a]) : "Group", cost[a], out_bytes, params[a]);
  }
  for (const auto& [s, t, o] : edges) b.add_edge(s, t, o);
  CoarseGraph c;
  c.graph = b.build();
  c.group = std::move(group);
  return c;
}

namespace {

// The forward op a node belongs to: its name without one of the training suffixes.
std::string training_owner(const std::string& name) {
  for (const char* suffix : {"/grad", "/update", "/grad_sum"}) {
    const std::string s(suffix);
    if (name.size() > s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0)
      return name.substr(0, name.size() - s.size());
  }
  return name;
}

}  // namespace

GroupMembers group_members(const std::vector<int32_t>& group_of_op) {
  GroupMembers out;
  std::unordered_map<int32_t, int> number;
  out.index.resize(group_of_op.size());
  for (size_t v = 0; v < group_of_op.size(); ++v) {
    auto [it, fresh] = number.emplace(group_of_op[v], static_cast<int>(out.members.size()));
    if (fresh) out.members.emplace_back();
    out.index[v] = it->second;
    out.members[it->second].push_back(static_cast<NodeId>(v));
  }
  return out;
}

std::vector<int32_t> training_op_groups(const Graph& g) {
  const auto owner = training_owner;
  std::unordered_map<std::string, int32_t> id;
  std::vector<int32_t> group(g.num_nodes());
  for (NodeId v = 0; v < g.num_nodes(); ++v)
    group[v] = id.emplace(owner(g.node_name(v)), static_cast<int32_t>(id.size())).first->second;
  return group;
}

ForwardChains forward_chains(const Graph& g) {
  const int n = g.num_nodes();
  const std::vector<int32_t> group = training_op_groups(g);
  int num_groups = 0;
  for (int32_t x : group) num_groups = std::max(num_groups, x + 1);
  std::vector<std::vector<NodeId>> members(num_groups);
  for (NodeId v = 0; v < n; ++v) members[group[v]].push_back(v);
  // The forward op: the member without a training suffix, else (a group of training ops
  // only) the first member in topological order.
  std::vector<NodeId> head(num_groups, -1);
  for (NodeId v : g.topo_order()) {
    NodeId& h = head[group[v]];
    if (h < 0 || (training_owner(g.node_name(v)) == g.node_name(v) &&
                  training_owner(g.node_name(h)) != g.node_name(h)))
      h = v;
  }
  // Forward edges: between the heads of two groups (distinct parents and children).
  std::vector<std::vector<int32_t>> children(num_groups), parents(num_groups);
  auto add_once = [](std::vector<int32_t>& list, int32_t x) {
    if (std::find(list.begin(), list.end(), x) == list.end()) list.push_back(x);
  };
  for (EdgeId e = 0; e < g.num_edges(); ++e) {
    const NodeId a = g.edge_src(e), b = g.edge_dst(e);
    if (group[a] == group[b] || head[group[a]] != a || head[group[b]] != b) continue;
    add_once(children[group[a]], group[b]);
    add_once(parents[group[b]], group[a]);
  }
  auto continues = [&](int32_t x) {
    return parents[x].size() == 1 && children[parents[x][0]].size() == 1;
  };
  ForwardChains f;
  f.chain.assign(n, -1);
  f.position.assign(n, 0);
  // Heads come in topological order, so a chain's start is met before the rest of it.
  for (NodeId v : g.topo_order()) {
    const int32_t x = group[v];
    if (head[x] != v || continues(x)) continue;
    const int32_t c = static_cast<int32_t>(f.chains.size());
    f.chains.emplace_back();
    for (int32_t y = x;;) {
      for (NodeId u : members[y]) {
        f.chain[u] = c;
        f.position[u] = static_cast<int32_t>(f.chains[c].size());
      }
      f.chains[c].push_back(members[y]);
      if (children[y].size() != 1 || !continues(children[y][0])) break;
      y = children[y][0];
    }
  }
  return f;
}

int64_t cut_bytes(const Graph& g, const std::vector<int32_t>& group) {
  std::set<std::tuple<NodeId, int, int32_t>> seen;
  int64_t total = 0;
  for (EdgeId e = 0; e < g.num_edges(); ++e) {
    const NodeId s = g.edge_src(e), t = g.edge_dst(e);
    if (group[s] == group[t]) continue;
    if (seen.insert({s, g.edge_out(e), group[t]}).second) total += g.edge_bytes(e);
  }
  return total;
}

Placement ungroup(const CoarseGraph& c, const Placement& coarse) {
  PLACETO_CHECK_EQ(static_cast<int>(coarse.device.size()), c.graph.num_nodes());
  Placement fine(coarse.num_devices, static_cast<int>(c.group.size()));
  for (size_t v = 0; v < c.group.size(); ++v) fine.device[v] = coarse.device[c.group[v]];
  return fine;
}

}  // namespace placeto
