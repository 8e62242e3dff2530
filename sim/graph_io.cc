#include "sim/graph_io.h"

#include "common/error.h"
#include "common/files.h"

namespace placeto {
namespace {
int64_t read_bytes(const JsonField& f) {
  const int64_t b = f.as_nonnegative_int();
  if (b > kMaxTensorBytes) f.fail("must be <= 2^50 bytes (1 PiB), got " + std::to_string(b));
  return b;
}
}  // namespace

Graph graph_from_json(const Json& doc, const std::string& source) {
  JsonField root(doc, source, "");
  root.expect_object();
  if (root.has("format")) {
    std::string format = root.at("format").as_string();
    if (format != "placeto-graph")
      root.at("format").fail("expected \"placeto-graph\", got \"" + format + "\"");
  }
  if (root.has("version")) {
    int64_t version = root.at("version").as_int();
    if (version > kGraphFormatVersion || version < 1)
      root.at("version").fail("unsupported graph format version " + std::to_string(version) +
                              " (this build reads version " + std::to_string(kGraphFormatVersion) +
                              ")");
  }
  GraphBuilder builder(source);
  if (root.has("name")) builder.set_name(root.at("name").as_string());
  JsonField nodes = root.at("nodes");
  nodes.expect_array();
  for (size_t i = 0; i < nodes.size(); ++i) {
    JsonField unnamed = nodes.at(i);
    unnamed.expect_object();
    const std::string name = unnamed.at("name").as_string();
    const JsonField node = unnamed.named(name);  // errors below read nodes[i] "name".field
    std::string op = node.has("op") ? node.at("op").as_string() : std::string();
    double cost = node.at("cost_us").as_nonnegative_number();
    if (cost > kMaxOpCostUs)
      node.at("cost_us").fail("must be <= 1e12 us (11.6 days; a units mistake?), got " +
                              node.at("cost_us").value().dump());
    std::vector<int64_t> outs;
    if (node.has("out_bytes")) {
      JsonField ob = node.at("out_bytes");
      ob.expect_array();
      for (size_t k = 0; k < ob.size(); ++k) outs.push_back(read_bytes(ob.at(k)));
    }
    int64_t params = node.has("param_bytes") ? read_bytes(node.at("param_bytes")) : 0;
    if (builder.find(name) >= 0) node.at("name").fail("duplicate node name " + quoted_name(name));
    builder.add_node(name, op, cost, std::move(outs), params);
  }
  if (root.has("edges")) {
    JsonField edges = root.at("edges");
    edges.expect_array();
    for (size_t i = 0; i < edges.size(); ++i) {
      JsonField edge = edges.at(i);
      edge.expect_object();
      std::string src = edge.at("src").as_string();
      std::string dst = edge.at("dst").as_string();
      int64_t out = edge.has("out") ? edge.at("out").as_nonnegative_int() : 0;
      if (out > (1 << 30)) edge.at("out").fail("output index too large: " + std::to_string(out));
      builder.add_edge(src, dst, static_cast<int>(out),
                       "edges[" + std::to_string(i) + "] (" + printable_name(src) + " -> " +
                           printable_name(dst) + ")");
    }
  }
  return builder.build();
}

Graph load_graph(const std::string& path) { return graph_from_json(parse_json_file(path), path); }

Json graph_to_json(const Graph& g) {
  Json doc;
  doc["format"] = "placeto-graph";
  doc["version"] = kGraphFormatVersion;
  doc["name"] = g.name();
  Json nodes = Json::array();
  for (NodeId v = 0; v < g.num_nodes(); ++v) {
    Json n;
    n["name"] = g.node_name(v);
    if (!g.op_type(v).empty()) n["op"] = g.op_type(v);
    n["cost_us"] = g.cost_us(v);
    Json outs = Json::array();
    for (int k = 0; k < g.num_outputs(v); ++k) outs.push_back(g.out_bytes(v, k));
    n["out_bytes"] = outs;
    if (g.param_bytes(v) > 0) n["param_bytes"] = g.param_bytes(v);
    nodes.push_back(std::move(n));
  }
  doc["nodes"] = std::move(nodes);
  Json edges = Json::array();
  for (EdgeId e = 0; e < g.num_edges(); ++e) {
    Json j;
    j["src"] = g.node_name(g.edge_src(e));
    j["dst"] = g.node_name(g.edge_dst(e));
    if (g.edge_out(e) != 0) j["out"] = g.edge_out(e);
    edges.push_back(std::move(j));
  }
  doc["edges"] = std::move(edges);
  return doc;
}

void save_graph(const Graph& g, const std::string& path) {
  write_file_atomic(path, graph_to_json(g).dump(1) + "\n");
}

Placement placement_from_json(const Json& doc, const Graph& g, const std::string& source) {
  JsonField root(doc, source, "");
  root.expect_object();
  int64_t d = root.at("devices").as_int();
  if (d < 1 || d > 4096) root.at("devices").fail("must be in [1, 4096], got " + std::to_string(d));
  Placement p(static_cast<int>(d), g.num_nodes(), -1);
  JsonField map = root.at("placement");
  map.expect_object();
  for (auto it = map.value().begin(); it != map.value().end(); ++it) {
    JsonField entry(it.value(), source, "placement." + quoted_name(it.key()));
    NodeId v = g.find(it.key());
    if (v < 0)
      entry.fail("no op of that name in graph " + quoted_name(g.name()) +
                 " (is the placement for another graph?)");
    int64_t dev = entry.as_int();
    if (dev < 0 || dev >= d)
      entry.fail("device " + std::to_string(dev) + " is out of range [0, " + std::to_string(d) +
                 ")");
    p.device[v] = static_cast<int32_t>(dev);
  }
  for (NodeId v = 0; v < g.num_nodes(); ++v)
    if (p.device[v] < 0)
      throw_input_error(source, "placement." + quoted_name(g.node_name(v)), "op is not placed");
  return p;
}

Placement load_placement(const std::string& path, const Graph& g) {
  return placement_from_json(parse_json_file(path), g, path);
}

Json placement_to_json(const Graph& g, const Placement& p) {
  Json doc;
  doc["devices"] = p.num_devices;
  Json map = Json::object();
  for (NodeId v = 0; v < g.num_nodes(); ++v) map[g.node_name(v)] = p.device[v];
  doc["placement"] = std::move(map);
  return doc;
}

void save_placement(const Graph& g, const Placement& p, const std::string& path) {
  write_file_atomic(path, placement_to_json(g, p).dump(1) + "\n");
}

}  // namespace placeto
