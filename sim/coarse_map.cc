#include "sim/coarse_map.h"

#include <map>

#include "common/error.h"
#include "common/files.h"

namespace placeto {

const char* op_role_name(OpRole role) {
  switch (role) {
    case OpRole::kInput:
      return "input";
    case OpRole::kForward:
      return "forward";
    case OpRole::kGrad:
      return "grad";
    case OpRole::kUpdate:
      return "update";
  }
  return "forward";
}

bool parse_op_role(const std::string& name, OpRole* role) {
  for (OpRole r : {OpRole::kInput, OpRole::kForward, OpRole::kGrad, OpRole::kUpdate})
    if (name == op_role_name(r)) {
      *role = r;
      return true;
    }
  return false;
}

namespace {

Json origin_to_json(const OpOrigin& o) {
  Json j{{"role", op_role_name(o.role)}, {"name", o.name}};
  if (o.role != OpRole::kInput) j["node"] = o.node;
  return j;
}

OpOrigin origin_from_json(const JsonField& f) {
  f.expect_object();
  OpOrigin o;
  const std::string role = f.at("role").as_string();
  if (!parse_op_role(role, &o.role))
    f.at("role").fail("unknown role '" + role + "' (expected input, forward, grad or update)");
  o.name = f.at("name").as_string();
  if (o.role != OpRole::kInput) {
    const int64_t node = f.at("node").as_nonnegative_int();
    if (node > (int64_t{1} << 30)) f.at("node").fail("node index too large");
    o.node = static_cast<int>(node);
  }
  return o;
}

}  // namespace

std::string companion_path(const std::string& path, const std::string& tag) {
  const std::string ext = ".json";
  const bool json =
      path.size() > ext.size() && path.compare(path.size() - ext.size(), ext.size(), ext) == 0;
  return (json ? path.substr(0, path.size() - ext.size()) : path) + "." + tag + ext;
}

Json coarse_map_to_json(const Graph& fine, const CoarseGraph& c,
                        const std::vector<OpOrigin>* origins) {
  Json map = Json::object();
  for (NodeId v = 0; v < fine.num_nodes(); ++v) map[fine.node_name(v)] = c.group[v];
  Json doc{{"format", "placeto-coarse-map"}, {"version", 1},
           {"graph", fine.name()},           {"coarse_graph", c.graph.name()},
           {"groups", c.graph.num_nodes()},  {"map", map}};
  if (origins) {
    PLACETO_CHECK_EQ(static_cast<int>(origins->size()), fine.num_nodes());
    Json o = Json::object();
    for (NodeId v = 0; v < fine.num_nodes(); ++v)
      o[fine.node_name(v)] = origin_to_json((*origins)[v]);
    doc["origins"] = std::move(o);
  }
  return doc;
}

void save_coarse_map(const Graph& fine, const CoarseGraph& c, const std::string& path,
                     const std::vector<OpOrigin>* origins) {
  write_file_atomic(path, coarse_map_to_json(fine, c, origins).dump(1) + "\n");
}

CoarseMap read_coarse_map(const std::string& path, const Graph& fine) {
  Json doc = parse_json_file(path);
  JsonField root(doc, path, "");
  root.expect_object();
  if (root.at("format").as_string() != "placeto-coarse-map")
    root.at("format").fail("expected \"placeto-coarse-map\"");
  if (root.at("version").as_int() != 1) root.at("version").fail("unsupported version");
  CoarseMap m;
  m.graph = root.at("graph").as_string();
  if (m.graph != fine.name())
    root.at("graph").fail("the map is for graph '" + m.graph + "', but the fine graph is '" +
                          fine.name() + "'");
  m.coarse_graph = root.at("coarse_graph").as_string();
  const int64_t k = root.at("groups").as_nonnegative_int();
  if (k < 1 || k > fine.num_nodes())
    root.at("groups").fail("must be in [1, " + std::to_string(fine.num_nodes()) +
                           "] (the fine graph's ops), got " + std::to_string(k));
  m.groups = static_cast<int>(k);
  JsonField map = root.at("map");
  map.expect_object();
  m.group.assign(fine.num_nodes(), -1);
  for (auto it = map.value().begin(); it != map.value().end(); ++it) {
    const NodeId v = fine.find(it.key());
    JsonField f(it.value(), path, "map." + it.key());
    if (v < 0) f.fail("no op of that name in graph '" + fine.name() + "'");
    const int64_t gid = f.as_nonnegative_int();
    if (gid >= k)
      f.fail("group " + std::to_string(gid) + " is out of range [0, " + std::to_string(k) + ")");
    m.group[v] = static_cast<int32_t>(gid);
  }
  std::vector<int> members(m.groups, 0);
  for (NodeId v = 0; v < fine.num_nodes(); ++v) {
    if (m.group[v] < 0) map.fail("op '" + fine.node_name(v) + "' has no group");
    ++members[m.group[v]];
  }
  for (int i = 0; i < m.groups; ++i)
    if (members[i] == 0) map.fail("group " + std::to_string(i) + " has no op");
  if (root.has("origins")) {
    JsonField origins = root.at("origins");
    origins.expect_object();
    m.origins.resize(fine.num_nodes());
    std::vector<char> seen(fine.num_nodes(), 0);
    for (auto it = origins.value().begin(); it != origins.value().end(); ++it) {
      const NodeId v = fine.find(it.key());
      JsonField f(it.value(), path, "origins." + it.key());
      if (v < 0) f.fail("no op of that name in graph '" + fine.name() + "'");
      m.origins[v] = origin_from_json(f);
      seen[v] = 1;
    }
    for (NodeId v = 0; v < fine.num_nodes(); ++v)
      if (!seen[v]) origins.fail("op '" + fine.node_name(v) + "' has no origin");
  }
  return m;
}

namespace {

CoarseGraph build_from_map(const CoarseMap& m, const std::string& path, const Graph& fine) {
  try {
    return build_coarse_graph(fine, m.group, m.groups);
  } catch (const InputError& e) {
    throw_input_error(path, "map", e.what());
  }
}

}  // namespace

CoarseGraph load_coarse_map(const std::string& path, const Graph& fine) {
  return build_from_map(read_coarse_map(path, fine), path, fine);
}

CoarseGraph match_coarse_graph(const CoarseMap& map, const std::string& map_path, const Graph& fine,
                               const Graph& coarse, const std::string& coarse_path) {
  if (map.coarse_graph != coarse.name())
    throw_input_error(map_path, "coarse_graph",
                      "the map is for coarse graph '" + map.coarse_graph + "', but " + coarse_path +
                          " is graph '" + coarse.name() + "'");
  if (map.groups != coarse.num_nodes())
    throw_input_error(map_path, "groups",
                      "the map has " + std::to_string(map.groups) + " groups, but " + coarse_path +
                          " has " + std::to_string(coarse.num_nodes()) + " nodes");
  CoarseGraph c = build_from_map(map, map_path, fine);
  // build_coarse_graph numbers groups in a topological order; a map whose numbering differs,
  // or whose groups hold other ops than the coarse nodes, would send ops to wrong devices.
  for (NodeId i = 0; i < coarse.num_nodes(); ++i) {
    NodeId v = 0;
    while (map.group[v] != i) ++v;
    if (c.group[v] != i || c.graph.node_name(i) != coarse.node_name(i))
      throw_input_error(map_path, "map." + fine.node_name(v),
                        "group " + std::to_string(i) + " (ops " + c.graph.node_name(c.group[v]) +
                            ") is not node " + std::to_string(i) + " of " + coarse_path + " ('" +
                            coarse.node_name(i) + "')");
  }
  return c;
}

Json placement_by_onnx_node(const Graph& fine, const std::vector<OpOrigin>& origins,
                            const Placement& p) {
  PLACETO_CHECK_EQ(static_cast<int>(origins.size()), fine.num_nodes());
  PLACETO_CHECK_EQ(static_cast<int>(p.device.size()), fine.num_nodes());
  Json inputs = Json::array();
  std::map<int, Json> nodes;  // by ONNX node index: file order
  for (NodeId v = 0; v < fine.num_nodes(); ++v) {
    const OpOrigin& o = origins[v];
    if (o.role == OpRole::kInput) {
      inputs.push_back(
          Json{{"input", o.name}, {"op", fine.node_name(v)}, {"forward", p.device[v]}});
      continue;
    }
    Json& entry = nodes[o.node];
    if (entry.is_null()) entry = Json{{"node", o.node}, {"name", o.name}};
    if (o.role == OpRole::kForward) entry["op"] = fine.node_name(v);
    entry[op_role_name(o.role)] = p.device[v];
  }
  for (auto& [index, entry] : nodes) inputs.push_back(std::move(entry));
  return inputs;
}

}  // namespace placeto
