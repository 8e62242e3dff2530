#include "sim/onnx/onnx_export.h"

#include <google/protobuf/unknown_field_set.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <deque>
#include <map>
#include <set>

#include "common/error.h"
#include "common/files.h"
#include "sim/onnx/module_groups.h"
#include "sim/onnx/op_costs.h"

namespace placeto {
namespace {

constexpr int kNodeMetadataPropsField = 9;  // NodeProto.metadata_props (ONNX >= 1.16)

onnx::ModelProto parse_model(const ModelPlacement& p) {
  onnx::ModelProto m;
  if (!m.ParseFromString(p.model_bytes))
    throw_input_error(p.model_path, "", "not an ONNX model: the protobuf does not parse");
  return m;
}

// The placed op of each ONNX node's forward role, -1 when folded.
std::vector<NodeId> forward_op_of_node(const ModelPlacement& p, int num_nodes) {
  std::vector<NodeId> op(num_nodes, -1);
  for (NodeId v = 0; v < p.model.graph.num_nodes(); ++v) {
    const OpOrigin& o = p.model.ops.nodes[v].origin;
    if (o.role == OpRole::kForward && o.node >= 0 && o.node < num_nodes) op[o.node] = v;
  }
  return op;
}

}  // namespace

std::string device_string(const std::string& prefix, int device) {
  return prefix + std::to_string(device);
}

ModelPlacement read_model_placement(const std::string& placement_path,
                                    const std::string& model_path,
                                    const std::vector<std::string>& data_inputs,
                                    int cluster_devices) {
  ModelPlacement p;
  p.model_path = model_path;
  p.placement_path = placement_path;
  const Json doc = parse_json_file(placement_path);  // first: a bad placement fails fast
  p.model_bytes = read_file(model_path);
  ImportOptions options;
  options.training = true;  // a superset: forward names are those of an inference import
  options.data_inputs = data_inputs;
  p.model = import_onnx_bytes(p.model_bytes, model_path, options);
  const Graph& g = p.model.graph;

  JsonField root(doc, placement_path, "");
  root.expect_object();
  const int64_t d = root.at("devices").as_int();
  if (d < 1 || d > 4096) root.at("devices").fail("must be in [1, 4096], got " + std::to_string(d));
  p.num_devices = static_cast<int>(d);
  JsonField map = root.at("placement");
  map.expect_object();
  p.op_device.assign(g.num_nodes(), -1);
  for (auto it = map.value().begin(); it != map.value().end(); ++it) {
    JsonField entry(it.value(), placement_path, "placement." + quoted_name(it.key()));
    const NodeId v = g.find(it.key());
    if (v < 0)
      entry.fail("no op of that name in the model " + model_path +
                 " (a placement of another model, or imported with other --inputs?)");
    const int64_t dev = entry.as_int();
    if (dev < 0 || dev >= d)
      entry.fail("device " + std::to_string(dev) + " is out of range [0, " + std::to_string(d) +
                 ")");
    if (cluster_devices > 0 && dev >= cluster_devices)
      entry.fail("device " + std::to_string(dev) + " is outside the cluster's " +
                 std::to_string(cluster_devices) + " devices (--devices/--cluster)");
    p.op_device[v] = static_cast<int>(dev);
  }
  int train_ops = 0, train_placed = 0;
  std::string train_missing;
  for (NodeId v = 0; v < g.num_nodes(); ++v) {
    const OpRole role = p.model.ops.nodes[v].origin.role;
    if (role == OpRole::kInput || role == OpRole::kForward) {
      if (p.op_device[v] < 0)
        throw_input_error(
            placement_path, "placement." + quoted_name(g.node_name(v)),
            "op of the model " + model_path + " is not placed (a placement of another model?)");
      continue;
    }
    ++train_ops;
    if (p.op_device[v] >= 0)
      ++train_placed;
    else if (train_missing.empty())
      train_missing = g.node_name(v);
  }
  if (train_placed > 0 && train_placed < train_ops)
    throw_input_error(placement_path, "placement." + quoted_name(train_missing),
                      "not placed, but " + std::to_string(train_placed) + " of the model's " +
                          std::to_string(train_ops) +
                          " grad/update ops are (place all of them or none)");
  p.training = train_placed > 0;

  const onnx::ModelProto model = parse_model(p);
  const int num_nodes = model.graph().node_size();
  const std::vector<NodeId> fwd = forward_op_of_node(p, num_nodes);
  p.node_device.assign(num_nodes, -1);
  for (int i = 0; i < num_nodes; ++i)
    if (fwd[i] >= 0) p.node_device[i] = p.op_device[fwd[i]];

  if (root.has("onnx_nodes")) {
    JsonField nodes = root.at("onnx_nodes");
    nodes.expect_array();
    for (size_t i = 0; i < nodes.size(); ++i) {
      JsonField e = nodes.at(i);
      e.expect_object();
      auto check_device = [&](const JsonField& f, NodeId op) {
        const int64_t dev = f.as_int();
        if (op < 0) f.fail("the model has no such op");
        if (dev != p.op_device[op])
          f.fail("device " + std::to_string(dev) + " disagrees with placement." +
                 quoted_name(g.node_name(op)) + " (" + std::to_string(p.op_device[op]) + ")");
      };
      if (e.has("input")) {
        const std::string name = e.at("input").as_string();
        NodeId op = -1;
        for (NodeId v = 0; v < g.num_nodes(); ++v)
          if (p.model.ops.nodes[v].origin.role == OpRole::kInput &&
              p.model.ops.nodes[v].origin.name == name)
            op = v;
        if (op < 0)
          e.at("input").fail("no data input " + quoted_name(name) + " in the model " + model_path +
                             " (a placement of another model?)");
        check_device(e.at("forward"), op);
        continue;
      }
      const int64_t node = e.at("node").as_int();
      if (node < 0 || node >= num_nodes || fwd[node] < 0)
        e.at("node").fail("the model " + model_path + " has no op for ONNX node " +
                          std::to_string(node) + " (a placement of another model?)");
      const std::string name = e.at("name").as_string();
      if (name != model.graph().node(static_cast<int>(node)).name())
        e.at("name").fail("node " + std::to_string(node) + " of the model " + model_path +
                          " is named " + quoted_name(model.graph().node(node).name()) +
                          " (a placement of another model?)");
      check_device(e.at("forward"), fwd[node]);
      for (const char* role : {"grad", "update"}) {
        if (!e.has(role)) continue;
        const std::string op_name =
            g.node_name(fwd[node]) + (role == std::string("grad") ? "/grad" : "/update");
        check_device(e.at(role), g.find(op_name));
      }
    }
  }
  return p;
}

std::string annotate_onnx(const ModelPlacement& p, const std::string& device_prefix) {
  onnx::ModelProto model = parse_model(p);
  onnx::GraphProto* graph = model.mutable_graph();
  std::map<std::string, int> name_count;
  for (const onnx::NodeProto& n : graph->node()) ++name_count[n.name()];
  Json by_node = Json::object();
  for (int i = 0; i < graph->node_size(); ++i) {
    onnx::NodeProto* node = graph->mutable_node(i);
    google::protobuf::UnknownFieldSet* unknown = node->mutable_unknown_fields();
    // Drop an earlier "device" entry (a model annotated before, or by a newer ONNX).
    for (int f = unknown->field_count() - 1; f >= 0; --f) {
      const google::protobuf::UnknownField& field = unknown->field(f);
      if (field.number() != kNodeMetadataPropsField ||
          field.type() != google::protobuf::UnknownField::TYPE_LENGTH_DELIMITED)
        continue;
      onnx::StringStringEntryProto old;
      if (old.ParseFromString(field.length_delimited()) && old.key() == "device")
        unknown->DeleteSubrange(f, 1);
    }
    if (p.node_device[i] < 0) continue;
    const std::string device = device_string(device_prefix, p.node_device[i]);
    onnx::StringStringEntryProto entry;
    entry.set_key("device");
    entry.set_value(device);
    unknown->AddLengthDelimited(kNodeMetadataPropsField, entry.SerializeAsString());
    const bool unique = !node->name().empty() && name_count[node->name()] == 1;
    by_node[unique ? node->name() : "#" + std::to_string(i)] = device;
  }
  onnx::StringStringEntryProto* meta = nullptr;
  for (auto& m : *model.mutable_metadata_props())
    if (m.key() == "placeto.placement") meta = &m;
  if (meta == nullptr) meta = model.add_metadata_props();
  meta->set_key("placeto.placement");
  meta->set_value(by_node.dump());
  std::string out;
  if (!model.SerializeToString(&out))
    throw InputError(p.model_path + ": the annotated model does not serialise (over 2 GB?)");
  return out;
}

TorchDeviceMap torch_device_map(const ModelPlacement& p, const std::string& device_prefix) {
  const Graph& g = p.model.graph;
  const int n = g.num_nodes();
  std::vector<std::string> names;
  std::vector<int> name_of(n, -1);
  for (NodeId v = 0; v < n; ++v) {
    const OpOrigin& o = p.model.ops.nodes[v].origin;
    if (o.role == OpRole::kInput) continue;
    name_of[v] = static_cast<int>(names.size());
    names.push_back(o.name);
  }
  const std::vector<ModulePath> paths = module_paths(names);
  TorchDeviceMap r;
  r.module.assign(n, "");
  bool any_scoped = false;
  std::string example;
  // Per module: device -> forward ops; first ONNX node index (file order of the map).
  std::map<std::string, std::map<int, int>> votes;
  std::map<std::string, int> first_node;
  std::map<int, int> all_votes;
  for (NodeId v = 0; v < n; ++v) {
    if (name_of[v] < 0) continue;
    const ModulePath& mp = paths[name_of[v]];
    const OpOrigin& o = p.model.ops.nodes[v].origin;
    any_scoped |= mp.scoped;
    if (!mp.scoped && o.role == OpRole::kForward) {
      ++r.unscoped_ops;
      if (example.empty()) example = o.name.empty() ? g.node_name(v) : o.name;
    }
    r.module[v] = mp.path;
    if (o.role != OpRole::kForward) continue;
    ++votes[mp.path][p.op_device[v]];
    ++all_votes[p.op_device[v]];
    auto [it, fresh] = first_node.emplace(mp.path, o.node);
    if (!fresh) it->second = std::min(it->second, o.node);
  }
  if (!any_scoped)
    throw InputError(p.model_path +
                     ": no ONNX node name carries a PyTorch module scope (such as "
                     "\"/layer1/layer1.0/conv1/Conv\"); e.g. node " +
                     quoted_name(example) +
                     ": --format torch-device-map needs a model exported by torch.onnx.export");
  auto majority = [](const std::map<int, int>& v) {
    int best = -1, count = -1;
    for (const auto& [dev, c] : v)
      if (c > count) best = dev, count = c;  // ties: the lowest device
    return best;
  };
  std::map<std::string, int> device;
  Json inexact = Json::array();
  for (const auto& [module, v] : votes) {
    device[module] = majority(v);
    if (v.size() > 1) {
      Json devs = Json::object();
      for (const auto& [dev, c] : v) devs[device_string(device_prefix, dev)] = c;
      inexact.push_back(Json{{"module", module}, {"forward_ops", devs}});
    }
  }
  r.inexact_modules = static_cast<int>(inexact.size());
  if (!device.count("")) {
    device[""] = majority(all_votes);
    first_node[""] = -1;
  }
  std::vector<std::string> order;
  for (const auto& [m, d] : device) order.push_back(m);
  std::stable_sort(order.begin(), order.end(), [&](const std::string& a, const std::string& b) {
    const int da = module_depth(a), db = module_depth(b);
    if (da != db) return da < db;
    return first_node[a] < first_node[b];
  });
  Json map = Json::object();
  for (const auto& [m, d] : device) map[m] = device_string(device_prefix, d);
  r.module_device.assign(n, -1);
  for (NodeId v = 0; v < n; ++v)
    r.module_device[v] = name_of[v] < 0 ? p.op_device[v] : device.at(r.module[v]);
  r.doc = Json{{"format", "placeto-torch-device-map"},
               {"version", 1},
               {"model", p.model_path},
               {"placement", p.placement_path},
               {"devices", p.num_devices},
               {"device_map", map},
               {"order", order},
               {"inexact_modules", inexact},
               {"unscoped_ops", r.unscoped_ops}};
  return r;
}

Json pipeline_stages(const ModelPlacement& p, const std::string& device_prefix) {
  const onnx::ModelProto model = parse_model(p);
  const onnx::GraphProto& graph = model.graph();
  const Graph& g = p.model.graph;
  const int D = p.num_devices;
  auto is_forward = [&](NodeId v) { return p.model.ops.nodes[v].origin.role == OpRole::kForward; };
  // Quotient over devices: for each (a, b) one forward edge that realises it.
  std::vector<std::vector<EdgeId>> witness(D, std::vector<EdgeId>(D, -1));
  std::vector<bool> used(D, false);
  for (NodeId v = 0; v < g.num_nodes(); ++v)
    if (is_forward(v)) used[p.op_device[v]] = true;
  for (EdgeId e = 0; e < g.num_edges(); ++e) {
    const NodeId s = g.edge_src(e), t = g.edge_dst(e);
    if (!is_forward(s) || !is_forward(t)) continue;
    const int a = p.op_device[s], b = p.op_device[t];
    if (a != b && witness[a][b] < 0) witness[a][b] = e;
  }
  // Kahn over used devices, ties by device index.
  std::vector<int> indeg(D, 0), order;
  for (int a = 0; a < D; ++a)
    for (int b = 0; b < D; ++b)
      if (witness[a][b] >= 0) ++indeg[b];
  std::set<int> ready;
  for (int a = 0; a < D; ++a)
    if (used[a] && indeg[a] == 0) ready.insert(a);
  while (!ready.empty()) {
    const int a = *ready.begin();
    ready.erase(ready.begin());
    order.push_back(a);
    for (int b = 0; b < D; ++b)
      if (witness[a][b] >= 0 && --indeg[b] == 0) ready.insert(b);
  }
  int num_used = 0;
  for (int a = 0; a < D; ++a) num_used += used[a];
  if (static_cast<int>(order.size()) < num_used) {
    // A cycle among the devices left: an edge a -> b inside it and a shortest path b ~> a.
    for (int a = 0; a < D; ++a) {
      if (indeg[a] == 0) continue;
      for (int b = 0; b < D; ++b) {
        if (witness[a][b] < 0 || indeg[b] == 0) continue;
        std::vector<int> prev(D, -2);
        std::deque<int> queue{b};
        prev[b] = -1;
        while (!queue.empty() && prev[a] == -2) {
          const int x = queue.front();
          queue.pop_front();
          for (int y = 0; y < D; ++y)
            if (witness[x][y] >= 0 && prev[y] == -2) prev[y] = x, queue.push_back(y);
        }
        if (prev[a] == -2) continue;
        std::string path = std::to_string(a);
        for (int x = a; x != b; x = prev[x]) path = std::to_string(prev[x]) + " -> " + path;
        const EdgeId e1 = witness[a][b], e2 = witness[prev[a]][a];
        auto op = [&](NodeId v) {
          return quoted_name(g.node_name(v)) + " (device " + std::to_string(p.op_device[v]) + ")";
        };
        throw InputError(
            p.placement_path +
            ": the forward placement is not pipeline-contiguous, so it has no stages: " +
            op(g.edge_src(e1)) + " feeds " + op(g.edge_dst(e1)) + ", and device " +
            std::to_string(b) + " leads back to device " + std::to_string(a) + " (devices " + path +
            "; " + op(g.edge_src(e2)) + " feeds " + op(g.edge_dst(e2)) + ")");
      }
    }
    PLACETO_CHECK(false);  // Kahn stopped, so some device lies on a cycle
  }
  std::vector<int> stage_of_device(D, -1);
  for (size_t i = 0; i < order.size(); ++i) stage_of_device[order[i]] = static_cast<int>(i);
  const int S = static_cast<int>(order.size());

  // Tensors: output name -> producing ONNX node with an op (data Identity chains followed).
  const std::vector<NodeId> fwd = forward_op_of_node(p, graph.node_size());
  std::map<std::string, int> producer;
  std::set<std::string> data_inputs;
  for (NodeId v = 0; v < g.num_nodes(); ++v)
    if (p.model.ops.nodes[v].origin.role == OpRole::kInput)
      data_inputs.insert(p.model.ops.nodes[v].origin.name);
  for (int i = 0; i < graph.node_size(); ++i) {
    const onnx::NodeProto& node = graph.node(i);
    if (fwd[i] >= 0) {
      for (const std::string& out : node.output())
        if (!out.empty()) producer[out] = i;
    } else if (is_alias_op(node.op_type()) && node.input_size() > 0) {
      auto it = producer.find(node.input(0));
      if (it != producer.end() && node.output_size() > 0) producer[node.output(0)] = it->second;
    }
  }
  // The name of the producer's own output that `in` resolves to.
  std::map<std::string, std::string> canonical;
  for (int i = 0; i < graph.node_size(); ++i)
    if (fwd[i] >= 0)
      for (const std::string& out : graph.node(i).output()) canonical[out] = out;
  for (int i = 0; i < graph.node_size(); ++i) {
    const onnx::NodeProto& node = graph.node(i);
    if (fwd[i] < 0 && is_alias_op(node.op_type()) && node.input_size() > 0 &&
        canonical.count(node.input(0)) && node.output_size() > 0)
      canonical[node.output(0)] = canonical[node.input(0)];
  }
  Json stages = Json::array();
  std::vector<Json> nodes(S, Json::array()), inputs(S, Json::array());
  std::vector<std::set<std::string>> seen_inputs(S);
  // split i: tensors produced in stages <= i and read in stages > i.
  std::vector<std::set<std::pair<int, std::string>>> split(std::max(S - 1, 0));
  for (int i = 0; i < graph.node_size(); ++i) {
    if (fwd[i] < 0) continue;
    const int s = stage_of_device[p.op_device[fwd[i]]];
    const onnx::NodeProto& node = graph.node(i);
    nodes[s].push_back(node.name().empty() ? "#" + std::to_string(i) : node.name());
    for (const std::string& in : node.input()) {
      if (data_inputs.count(in) && seen_inputs[s].insert(in).second) inputs[s].push_back(in);
      auto it = producer.find(in);
      if (it == producer.end()) continue;
      const int ps = stage_of_device[p.op_device[fwd[it->second]]];
      PLACETO_CHECK_LE(ps, s);
      for (int k = ps; k < s; ++k) split[k].insert({it->second, canonical.at(in)});
    }
  }
  for (int s = 0; s < S; ++s)
    stages.push_back(Json{{"stage", s},
                          {"device", device_string(device_prefix, order[s])},
                          {"device_index", order[s]},
                          {"nodes", nodes[s]},
                          {"graph_inputs", inputs[s]}});
  Json splits = Json::array();
  for (int k = 0; k + 1 < S; ++k) {
    Json tensors = Json::array();
    for (const auto& [node, name] : split[k]) tensors.push_back(name);
    splits.push_back(Json{{"after_stage", k}, {"tensors", tensors}});
  }
  return Json{{"format", "placeto-stages"},
              {"version", 1},
              {"model", p.model_path},
              {"placement", p.placement_path},
              {"devices", p.num_devices},
              {"stages", stages},
              {"splits", splits}};
}

}  // namespace placeto
