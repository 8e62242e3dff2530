#include "sim/onnx/module_groups.h"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>
#include <utility>

#include "common/error.h"

namespace placeto {
namespace {

// "relu_2" -> "relu"; "" when `c` has no "_<digits>" suffix.
std::string call_suffix_base(const std::string& c) {
  const size_t us = c.rfind('_');
  if (us == std::string::npos || us == 0 || us + 1 == c.size()) return "";
  for (size_t i = us + 1; i < c.size(); ++i)
    if (c[i] < '0' || c[i] > '9') return "";
  return c.substr(0, us);
}

std::string join_path(const std::vector<std::string>& segs) {
  std::string out;
  for (const std::string& s : segs) out += (out.empty() ? "" : ".") + s;
  return out;
}

// Strongly connected components of a small directed graph (iterative Tarjan).  Returns the
// component id of every vertex.
std::vector<int> strongly_connected(int n, const std::vector<std::vector<int>>& adj) {
  std::vector<int> index(n, -1), low(n, 0), comp(n, -1), stack;
  std::vector<bool> on_stack(n, false);
  int counter = 0, comps = 0;
  for (int root = 0; root < n; ++root) {
    if (index[root] >= 0) continue;
    std::vector<std::pair<int, size_t>> call{{root, 0}};
    index[root] = low[root] = counter++;
    stack.push_back(root);
    on_stack[root] = true;
    while (!call.empty()) {
      auto& [v, next] = call.back();
      if (next < adj[v].size()) {
        const int w = adj[v][next++];
        if (index[w] < 0) {
          index[w] = low[w] = counter++;
          stack.push_back(w);
          on_stack[w] = true;
          call.push_back({w, 0});
        } else if (on_stack[w]) {
          low[v] = std::min(low[v], index[w]);
        }
        continue;
      }
      if (low[v] == index[v]) {
        int w;
        do {
          w = stack.back();
          stack.pop_back();
          on_stack[w] = false;
          comp[w] = comps;
        } while (w != v);
        ++comps;
      }
      const int done = v;
      call.pop_back();
      if (!call.empty()) low[call.back().first] = std::min(low[call.back().first], low[done]);
    }
  }
  return comp;
}

}  // namespace

std::string parent_module(const std::string& path) {
  const size_t dot = path.rfind('.');
  return dot == std::string::npos ? "" : path.substr(0, dot);
}

int module_depth(const std::string& path) {
  if (path.empty()) return 0;
  return 1 + static_cast<int>(std::count(path.begin(), path.end(), '.'));
}

bool module_contains(const std::string& ancestor, const std::string& module) {
  if (ancestor.empty() || ancestor == module) return true;
  return module.size() > ancestor.size() && module.compare(0, ancestor.size(), ancestor) == 0 &&
         module[ancestor.size()] == '.';
}

std::vector<ModulePath> module_paths(const std::vector<std::string>& names) {
  const size_t n = names.size();
  std::vector<ModulePath> out(n);
  std::vector<std::vector<std::string>> scopes(n);  // raw scope components (op dropped)
  size_t max_depth = 0;
  for (size_t i = 0; i < n; ++i) {
    const std::string& name = names[i];
    if (name.size() < 2 || name[0] != '/') continue;
    out[i].scoped = true;
    std::vector<std::string> comps;
    size_t start = 1;
    while (start <= name.size()) {
      size_t slash = name.find('/', start);
      if (slash == std::string::npos) slash = name.size();
      if (slash > start) comps.push_back(name.substr(start, slash - start));
      start = slash + 1;
    }
    if (!comps.empty()) comps.pop_back();  // the op
    max_depth = std::max(max_depth, comps.size());
    scopes[i] = std::move(comps);
  }
  // Resolve one depth at a time: the siblings of a component are the components at the same
  // depth under the same resolved parent.
  std::vector<std::vector<std::string>> segs(n);
  for (size_t d = 0; d < max_depth; ++d) {
    std::map<std::string, std::set<std::string>> siblings;  // parent path -> raw components
    for (size_t i = 0; i < n; ++i)
      if (scopes[i].size() > d) siblings[join_path(segs[i])].insert(scopes[i][d]);
    for (size_t i = 0; i < n; ++i) {
      if (scopes[i].size() <= d) continue;
      std::string c = scopes[i][d];
      const std::string base = call_suffix_base(c);
      if (!base.empty() && siblings[join_path(segs[i])].count(base)) c = base;
      std::vector<std::string>& s = segs[i];
      if (!s.empty() && c.size() > s.back().size() + 1 &&
          c.compare(0, s.back().size() + 1, s.back() + ".") == 0)
        s.back() = c;
      else
        s.push_back(c);
    }
  }
  for (size_t i = 0; i < n; ++i) out[i].path = join_path(segs[i]);
  return out;
}

ModuleGrouping group_by_module(const Graph& g, const std::vector<OpOrigin>& origins,
                               const std::string& source) {
  const int n = g.num_nodes();
  PLACETO_CHECK_EQ(static_cast<int>(origins.size()), n);
  std::vector<std::string> names;
  std::vector<int> name_of(n, -1);
  for (int v = 0; v < n; ++v) {
    if (origins[v].role == OpRole::kInput) continue;
    name_of[v] = static_cast<int>(names.size());
    names.push_back(origins[v].name);
  }
  const std::vector<ModulePath> paths = module_paths(names);
  ModuleGrouping result;
  std::vector<std::string> module(n);
  bool any_scoped = false;
  std::string example;
  for (int v = 0; v < n; ++v) {
    if (name_of[v] < 0) continue;
    const ModulePath& p = paths[name_of[v]];
    any_scoped |= p.scoped;
    if (!p.scoped) {
      ++result.unscoped_ops;
      if (example.empty()) example = origins[v].name.empty() ? g.node_name(v) : origins[v].name;
    }
    module[v] = p.path;
  }
  if (!any_scoped)
    throw InputError(source +
                     ": no ONNX node name carries a PyTorch module scope (such as "
                     "\"/layer1/layer1.0/conv1/Conv\"); got names like " +
                     quoted_name(example) +
                     ": grouping by module needs a model exported by torch.onnx.export");
  std::set<std::string> in_s{""};
  for (int v = 0; v < n; ++v)
    if (name_of[v] >= 0)
      for (std::string m = module[v]; !m.empty(); m = parent_module(m)) in_s.insert(m);

  std::vector<int32_t> group(n);
  std::vector<std::string> labels;
  for (;;) {
    // Groups under the current S.
    std::map<std::string, std::string> owner;  // module -> deepest ancestor-or-self in S
    auto owner_of = [&](const std::string& m) -> const std::string& {
      auto it = owner.find(m);
      if (it != owner.end()) return it->second;
      std::string a = m;
      while (!in_s.count(a)) a = parent_module(a);
      return owner.emplace(m, a).first->second;
    };
    std::map<std::string, int32_t> id;
    labels.clear();
    std::vector<std::string> group_module;  // per group: its module ("" for inputs too)
    std::vector<bool> is_input_group;
    for (NodeId v : g.topo_order()) {
      std::string label;
      std::string mod;
      const OpOrigin& o = origins[v];
      if (o.role == OpRole::kInput) {
        label = "input:" + o.name;
      } else {
        mod = owner_of(module[v]);
        label = mod;
        if (o.role == OpRole::kGrad || o.role == OpRole::kUpdate) label += "/grad";
      }
      auto [it, inserted] = id.emplace(label, static_cast<int32_t>(labels.size()));
      if (inserted) {
        labels.push_back(label);
        group_module.push_back(mod);
        is_input_group.push_back(o.role == OpRole::kInput);
      }
      group[v] = it->second;
    }
    const int k = static_cast<int>(labels.size());
    std::vector<std::set<int>> adj_set(k);
    for (EdgeId e = 0; e < g.num_edges(); ++e) {
      const int a = group[g.edge_src(e)], b = group[g.edge_dst(e)];
      if (a != b) adj_set[a].insert(b);
    }
    std::vector<std::vector<int>> adj(k);
    for (int a = 0; a < k; ++a) adj[a].assign(adj_set[a].begin(), adj_set[a].end());
    const std::vector<int> comp = strongly_connected(k, adj);
    std::map<int, std::vector<int>> members;
    for (int a = 0; a < k; ++a) members[comp[a]].push_back(a);
    std::set<std::string> remove;
    for (const auto& [c, groups] : members) {
      if (groups.size() < 2) continue;
      int deepest = 0;
      for (int a : groups) deepest = std::max(deepest, module_depth(group_module[a]));
      // A cycle needs two groups; inputs have no parents and the root is one group per role,
      // so some member lies below the root.
      PLACETO_CHECK_GT(deepest, 0);
      for (int a : groups)
        if (!is_input_group[a] && module_depth(group_module[a]) == deepest)
          remove.insert(group_module[a]);
    }
    if (remove.empty()) break;
    for (const std::string& m : remove) {
      in_s.erase(m);
      result.collapsed.push_back(m);
    }
  }
  const int k = static_cast<int>(labels.size());
  result.coarse = build_coarse_graph(g, group, k);
  result.labels.assign(k, "");
  for (int v = 0; v < n; ++v) result.labels[result.coarse.group[v]] = labels[group[v]];
  return result;
}

}  // namespace placeto
