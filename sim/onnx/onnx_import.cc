#include "sim/onnx/onnx_import.h"

#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>
#include <spdlog/spdlog.h>

#include <map>
#include <memory>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "common/error.h"
#include "common/files.h"
#include "common/progress.h"
#include "sim/device_profile_yaml.h"
#include "sim/onnx/onnx_proto_util.h"
#include "sim/onnx/training.h"

namespace placeto {
namespace {

// Data depends on a graph input's values; a parameter on weights only; a static tensor is a
// constant or shape arithmetic.  Only ops that touch data become graph nodes: the rest can be
// computed once when the model is loaded.
enum class Kind { kData, kParam, kStatic };

struct Tensor {
  TensorInfo info;
  StaticValue value;
  Kind kind = Kind::kStatic;
  int producer = -1;  // graph node of a data tensor
  int out_index = 0;
};

// Ops that pass a tensor through unchanged in content (for telling weights from data).
bool is_pass_through(const std::string& t) {
  static const std::unordered_set<std::string> kOps = {"Identity", "Transpose", "Cast",
                                                       "Reshape",  "Unsqueeze", "Squeeze",
                                                       "Flatten",  "Expand",    "Tile"};
  return kOps.count(t) > 0;
}

// Input slots that hold weights in models exported without them.
bool is_param_slot(const std::string& t, int slot) {
  if (t == "Conv" || t == "ConvTranspose" || t == "Gemm") return slot == 1 || slot == 2;
  if (t == "MatMul" || t == "PRelu") return slot == 1;
  if (t == "BatchNormalization") return slot >= 1 && slot <= 4;
  if (t == "InstanceNormalization" || t == "LayerNormalization" || t == "GroupNormalization")
    return slot == 1 || slot == 2;
  if (t == "LSTM" || t == "GRU" || t == "RNN") return slot >= 1 && slot <= 3;
  if (t == "Gather") return slot == 0;
  return t == "Add" || t == "Mul" || t == "Sub" || t == "Div";
}

class Importer {
 public:
  Importer(std::string source, const ImportOptions& options)
      : source_(std::move(source)), options_(options) {}

  ImportResult run(onnx::ModelProto& model) {
    check_model(model);
    fix_dynamic_dims(model);
    spell_out_kernel_shapes(model);
    check_window_attributes(model);
    infer_shapes(model);
    const onnx::GraphProto& g = model.graph();
    collect_tensors(g);
    name_nodes(g);
    add_data_inputs(g);
    std::vector<int> order = topological_order(g);
    std::unique_ptr<ProgressLine> progress;
    if (order.size() >= 5000)
      progress = std::make_unique<ProgressLine>("import " + source_, order.size(), "nodes");
    for (size_t i = 0; i < order.size(); ++i) {
      import_node(g.node(order[i]), order[i]);
      if (progress) progress->update(static_cast<int64_t>(i + 1));
    }
    if (progress) progress->finish();
    return finish(g);
  }

 private:
  [[noreturn]] void fail(const std::string& field, const std::string& message) const {
    throw_input_error(source_, field, message);
  }

  void check_model(const onnx::ModelProto& model) const {
    if (model.ir_version() <= 0 || !model.has_graph())
      fail("", "not an ONNX model (no IR version or no graph); is the file truncated?");
    int64_t opset = -1;
    for (const auto& o : model.opset_import())
      if (o.domain().empty() || o.domain() == "ai.onnx") opset = o.version();
    if (opset < 0) fail("opset_import", "no opset for the default ONNX domain");
    if (opset < kMinOnnxOpset || opset > kMaxOnnxOpset)
      fail("opset_import", "unsupported opset " + std::to_string(opset) +
                               " (supported: " + std::to_string(kMinOnnxOpset) + ".." +
                               std::to_string(kMaxOnnxOpset) + "); re-export with opset 13");
    if (model.graph().node_size() == 0) fail("graph", "the graph has no nodes");
    // An op of the standard domain that ONNX does not define is a broken model (onnx.checker
    // refuses it too), not a custom op: custom ops live in their own domain and get the
    // fallback cost.
    for (int i = 0; i < model.graph().node_size(); ++i) {
      const auto& node = model.graph().node(i);
      if (!node.domain().empty() && node.domain() != "ai.onnx") continue;
      if (onnx::OpSchemaRegistry::Schema(node.op_type(), static_cast<int>(opset), "") == nullptr)
        fail("graph.node[" + std::to_string(i) + "] " + quoted_name(node.name()),
             "op type " + quoted_name(node.op_type()) + " is not an ONNX operator at opset " +
                 std::to_string(opset) + " (a custom op needs its own domain)");
    }
  }

  // Symbolic dimensions (dynamic axes) become options_.dynamic_dim (default 1) so that
  // inference yields sizes; --batch scales.
  void fix_dynamic_dims(onnx::ModelProto& model) {
    for (auto& in : *model.mutable_graph()->mutable_input()) {
      if (!in.type().has_tensor_type() || !in.type().tensor_type().has_shape()) continue;
      for (auto& d : *in.mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim()) {
        if (d.has_dim_value()) continue;
        ++summary_.dynamic_dims;
        if (options_.dynamic_dim == 1)
          spdlog::warn("{}: input '{}': dynamic dimension '{}' taken as 1", source_, in.name(),
                       d.dim_param());
        d.set_dim_value(options_.dynamic_dim);
      }
    }
  }

  // Debian's ONNX 1.12 Conv shape inference takes a missing kernel_shape from the weight's
  // dims and then indexes the input's dims with it: a weight of higher rank than the input
  // reads past the end (a SEGV, found by fuzzing; tests/fuzz/regressions/fuzz_onnx/).  With
  // the attribute spelled out from a weight whose shape is in the file, ONNX checks its size
  // against the input and throws instead.  Costs are unchanged: they use the weight's shape.
  void spell_out_kernel_shapes(onnx::ModelProto& model) const {
    std::map<std::string, std::vector<int64_t>> shapes;
    const onnx::GraphProto& g = model.graph();
    auto add_type = [&](const onnx::ValueInfoProto& v) {
      if (!v.type().has_tensor_type() || !v.type().tensor_type().has_shape()) return;
      std::vector<int64_t> dims;
      for (const auto& d : v.type().tensor_type().shape().dim()) {
        if (!d.has_dim_value()) return;
        dims.push_back(d.dim_value());
      }
      shapes[v.name()] = dims;
    };
    for (const auto& v : g.input()) add_type(v);
    for (const auto& v : g.value_info()) add_type(v);
    for (const auto& t : g.initializer())
      shapes[t.name()] = std::vector<int64_t>(t.dims().begin(), t.dims().end());
    for (auto& node : *model.mutable_graph()->mutable_node()) {
      const std::string& t = node.op_type();
      if ((t != "Conv" && t != "ConvInteger" && t != "ConvTranspose") || node.input_size() < 2)
        continue;
      bool has_kernel_shape = false;
      for (const auto& a : node.attribute()) has_kernel_shape |= a.name() == "kernel_shape";
      auto w = shapes.find(node.input(1));
      if (has_kernel_shape || w == shapes.end() || w->second.size() < 3) continue;
      onnx::AttributeProto* a = node.add_attribute();
      a->set_name("kernel_shape");
      a->set_type(onnx::AttributeProto::INTS);
      for (size_t i = 2; i < w->second.size(); ++i) a->add_ints(w->second[i]);
    }
  }

  // Debian's ONNX 1.12 divides by the strides and dilations of convolutions and pools in its
  // shape inference: a 0 there is a division by zero (SIGFPE, found by fuzzing;
  // tests/fuzz/regressions/fuzz_onnx/conv_zero_stride.onnx).  They, and kernel sizes, must be
  // >= 1 and pads >= 0, as the operators' specification says.
  void check_window_attributes(const onnx::ModelProto& model) const {
    static const std::set<std::string> kWindowOps = {
        "Conv",        "ConvInteger", "ConvTranspose", "QLinearConv", "MaxPool",
        "AveragePool", "LpPool",      "MaxUnpool",     "MaxRoiPool",  "DeformConv"};
    const onnx::GraphProto& g = model.graph();
    for (int i = 0; i < g.node_size(); ++i) {
      const onnx::NodeProto& node = g.node(i);
      if (kWindowOps.count(node.op_type()) == 0) continue;
      for (const auto& a : node.attribute()) {
        const bool positive =
            a.name() == "strides" || a.name() == "dilations" || a.name() == "kernel_shape";
        if (!positive && a.name() != "pads") continue;
        for (int64_t v : a.ints())
          if (v < (positive ? 1 : 0))
            fail("graph.node[" + std::to_string(i) + "] " + quoted_name(node.name()) + " (" +
                     node.op_type() + ")",
                 "attribute " + a.name() + " has the value " + std::to_string(v) + "; it must be " +
                     (positive ? ">= 1" : ">= 0"));
      }
    }
  }

  void infer_shapes(onnx::ModelProto& model) {
    onnx::ModelProto copy = model;
    try {
      onnx::shape_inference::InferShapes(model, onnx::OpSchemaRegistry::Instance(),
                                         onnx::ShapeInferenceOptions(false, 0, true));
      return;
    } catch (const std::exception& e) {
      spdlog::warn(
          "{}: ONNX shape inference with data propagation failed ({}); retrying "
          "without",
          source_, e.what());
    }
    model = copy;
    try {
      onnx::shape_inference::InferShapes(model);
    } catch (const std::exception& e) {
      spdlog::warn("{}: ONNX shape inference failed ({}); using the importer's own rules only",
                   source_, e.what());
    }
  }

  void collect_tensors(const onnx::GraphProto& g) {
    for (const auto& vi : g.value_info()) tensors_[vi.name()].info = tensor_info_of(vi.type());
    for (const auto& vi : g.output()) tensors_[vi.name()].info = tensor_info_of(vi.type());
    for (const auto& vi : g.input()) {
      Tensor& t = tensors_[vi.name()];
      t.info = tensor_info_of(vi.type());
      t.kind = Kind::kParam;  // until add_data_inputs() says otherwise
    }
    for (const auto& init : g.initializer()) {
      Tensor& t = tensors_[init.name()];
      t.info = tensor_info_of(init);
      t.value = static_value_of(init);
      // Small integer initializers are shape arithmetic, not weights.
      t.kind = t.value ? Kind::kStatic : Kind::kParam;
    }
  }

  using Uses = std::unordered_map<std::string, std::vector<std::pair<int, int>>>;

  // Whether every use of `name` (following pass-through ops) is a weight slot.
  bool only_weight_uses(const std::string& name, const onnx::GraphProto& g, const Uses& uses,
                        int depth) const {
    auto it = uses.find(name);
    if (depth > 8 || it == uses.end()) return false;
    for (auto [n, slot] : it->second) {
      const onnx::NodeProto& node = g.node(n);
      if (is_pass_through(node.op_type()) && slot == 0 && node.output_size() > 0) {
        if (!only_weight_uses(node.output(0), g, uses, depth + 1)) return false;
      } else if (!is_param_slot(node.op_type(), slot)) {
        return false;
      }
    }
    return true;
  }

  void add_data_inputs(const onnx::GraphProto& g) {
    std::set<std::string> initializers;
    for (const auto& init : g.initializer()) initializers.insert(init.name());
    std::vector<std::string> data;
    if (!options_.data_inputs.empty()) {
      for (const std::string& name : options_.data_inputs) {
        bool found = false;
        for (const auto& in : g.input()) found = found || in.name() == name;
        if (!found) fail("graph.input", "no graph input named '" + name + "' (--inputs)");
        data.push_back(name);
      }
    } else {
      Uses uses;
      for (int n = 0; n < g.node_size(); ++n)
        for (int s = 0; s < g.node(n).input_size(); ++s) uses[g.node(n).input(s)].push_back({n, s});
      for (const auto& in : g.input())
        if (!initializers.count(in.name()) && !only_weight_uses(in.name(), g, uses, 0))
          data.push_back(in.name());
      if (data.empty())
        for (const auto& in : g.input())
          if (!initializers.count(in.name())) {
            data.push_back(in.name());
            break;
          }
    }
    if (data.empty()) fail("graph.input", "the model has no data input");
    for (const std::string& name : data) {
      Tensor& t = tensors_[name];
      // A dimension of 0 (not a symbolic one) makes every cost downstream 0: a broken export.
      if (t.info.known)
        for (int64_t dim : t.info.shape)
          if (dim == 0)
            fail("graph.input " + quoted_name(name),
                 "has a zero-size dimension; the cost model needs the real input shape "
                 "(re-export with a real example input)");
      t.kind = Kind::kData;
      t.producer = add_op(unique_name(name), "Input");
      ops_.nodes[t.producer].origin = OpOrigin{OpRole::kInput, name, -1};
      ops_.nodes[t.producer].is_input = true;
      ops_.nodes[t.producer].out_bytes = {t.info.bytes() * options_.batch};
      if (!t.info.known) spdlog::warn("{}: input '{}' has no static shape", source_, name);
      if (options_.batch > 1 && t.info.known && t.info.rank() > 0 && t.info.shape[0] > 1)
        spdlog::warn("{}: input '{}' has batch dimension {}; --batch {} multiplies it", source_,
                     name, t.info.shape[0], options_.batch);
    }
    summary_.data_inputs = data;
  }

  // Kahn's algorithm over tensor dependencies, ties in file order (ONNX requires the file
  // order to be topological, but exporters do not always comply).
  std::vector<int> topological_order(const onnx::GraphProto& g) const {
    int n = g.node_size();
    std::unordered_map<std::string, int> producer;
    for (int i = 0; i < n; ++i)
      for (const std::string& out : g.node(i).output())
        if (!out.empty()) producer[out] = i;
    std::vector<std::vector<int>> children(n);
    std::vector<int> missing(n, 0);
    for (int i = 0; i < n; ++i) {
      for (const std::string& in : g.node(i).input()) {
        if (in.empty()) continue;
        auto it = producer.find(in);
        if (it != producer.end()) {
          children[it->second].push_back(i);
          ++missing[i];
        } else if (!tensors_.count(in)) {
          fail("graph.node[" + std::to_string(i) + "] ('" + g.node(i).name() + "')",
               "input '" + in +
                   "' is neither produced by a node nor a graph input or "
                   "initializer");
        }
      }
    }
    std::set<int> ready;
    for (int i = 0; i < n; ++i)
      if (missing[i] == 0) ready.insert(i);
    std::vector<int> order;
    while (!ready.empty()) {
      int v = *ready.begin();
      ready.erase(ready.begin());
      order.push_back(v);
      for (int c : children[v])
        if (--missing[c] == 0) ready.insert(c);
    }
    if (static_cast<int>(order.size()) != n) fail("graph.node", "the graph has a cycle");
    return order;
  }

  // ONNX nodes are named first, in file order, so that their names survive unchanged when an
  // input has the same name: the names map placements back to the user's model.
  void name_nodes(const onnx::GraphProto& g) {
    for (int i = 0; i < g.node_size(); ++i) {
      const onnx::NodeProto& n = g.node(i);
      node_names_.push_back(
          unique_name(n.name().empty() ? n.op_type() + "_" + std::to_string(i) : n.name()));
    }
  }

  std::string unique_name(std::string name) {
    if (name.empty()) name = "node";
    std::string candidate = name;
    for (int k = 2; !names_.insert(candidate).second; ++k)
      candidate = name + "_" + std::to_string(k);
    return candidate;
  }

  int add_op(const std::string& name, const std::string& op_type) {
    OpNode node;
    node.name = name;
    node.op_type = op_type;
    ops_.nodes.push_back(std::move(node));
    return static_cast<int>(ops_.nodes.size()) - 1;
  }

  void import_node(const onnx::NodeProto& node, int index) {
    // Every ONNX op has an output; the code below indexes output 0 (found by fuzzing).
    if (node.output_size() == 0 || node.output(0).empty())
      fail("node '" + node_names_[index] + "'", "has no output");
    OpSpec spec;
    spec.op_type = node.op_type();
    spec.domain = node.domain();
    spec.attrs = attributes_of(node);
    std::vector<StaticValue> in_values;
    bool touches_data = false, reads_params = false;
    for (const std::string& name : node.input()) {
      if (name.empty()) {
        spec.inputs.emplace_back().present = false;
        in_values.emplace_back();
        continue;
      }
      const Tensor& t = tensors_.at(name);
      spec.inputs.push_back(t.info);
      spec.inputs.back().is_param = t.kind == Kind::kParam;
      in_values.push_back(t.value);
      touches_data = touches_data || t.kind == Kind::kData;
      reads_params = reads_params || t.kind == Kind::kParam;
    }
    for (const std::string& name : node.output()) {
      auto it = tensors_.find(name);
      spec.outputs.push_back(it == tensors_.end() ? TensorInfo{} : it->second.info);
    }
    std::vector<StaticValue> out_values(node.output_size());
    if (spec.op_type == "Constant") {
      for (const auto& a : node.attribute()) {
        if (a.name() == "value") {
          spec.outputs[0] = tensor_info_of(a.t());
          out_values[0] = static_value_of(a.t());
        } else if (a.name() == "value_int" || a.name() == "value_ints") {
          out_values[0] = a.name() == "value_int"
                              ? std::vector<int64_t>{a.i()}
                              : std::vector<int64_t>(a.ints().begin(), a.ints().end());
          spec.outputs[0].known = true;
          spec.outputs[0].elem_bytes = 8;
          if (a.name() == "value_ints")
            spec.outputs[0].shape = {static_cast<int64_t>(out_values[0]->size())};
        }
      }
    } else {
      std::vector<bool> was_known;
      for (const TensorInfo& t : spec.outputs) was_known.push_back(t.known);
      infer_missing_shapes(spec, in_values);
      for (size_t i = 0; i < spec.outputs.size(); ++i)
        if (!was_known[i] && spec.outputs[i].known) ++summary_.own_inferred_tensors;
      if (!touches_data || spec.op_type == "Shape" || spec.op_type == "Size")
        out_values = evaluate_static(spec, in_values);
    }
    // The shape of data is not data: Shape and Size results are static.
    if (spec.op_type == "Shape" || spec.op_type == "Size") touches_data = false;
    Kind out_kind = touches_data ? Kind::kData : reads_params ? Kind::kParam : Kind::kStatic;
    // A large constant is a weight that an exporter wrote as a Constant node.
    if (spec.op_type == "Constant" && !out_values[0] && spec.outputs[0].elements() > 64)
      out_kind = Kind::kParam;
    for (int i = 0; i < node.output_size(); ++i) {
      if (node.output(i).empty()) continue;
      Tensor& t = tensors_[node.output(i)];
      t.info = spec.outputs[i];
      t.kind = out_kind;
      t.value = out_kind == Kind::kData ? std::nullopt : out_values[i];
    }
    if (!touches_data) return;
    if (is_alias_op(spec.op_type)) {
      if (node.input_size() == 0 || node.input(0).empty())
        fail("node '" + node_names_[index] + "'", spec.op_type + " has no input");
      const Tensor& src = tensors_.at(node.input(0));
      Tensor& dst = tensors_[node.output(0)];
      dst.producer = src.producer;
      dst.out_index = src.out_index;
      return;
    }
    add_graph_op(node, index, spec);
  }

  void add_graph_op(const onnx::NodeProto& node, int index, const OpSpec& spec) {
    int v = add_op(node_names_[index], spec.op_type);
    // The name as in the file (maybe empty or repeated; `index` tells such nodes apart).
    ops_.nodes[v].origin = OpOrigin{OpRole::kForward, node.name(), index};
    ops_.nodes[v].op_class = cost_class(spec.op_type, spec.domain);
    ops_.nodes[v].spec = spec;
    OpCost cost = op_cost(spec);
    const double batch = static_cast<double>(options_.batch);
    OpNode& op = ops_.nodes[v];
    op.flops = cost.flops * batch;
    op.bytes = cost.act_bytes * batch + cost.param_bytes;
    op.fallback = cost.fallback;
    if (cost.fallback && summary_.fallback_op_types[spec.op_type]++ == 0)
      spdlog::warn(
          "{}: no cost rule for op type '{}{}{}' (first: node '{}'); using the "
          "fallback (1 FLOP per output element plus its traffic)",
          source_, spec.domain, spec.domain.empty() ? "" : ".", spec.op_type, op.name);
    bool unknown = false;
    for (int i = 0; i < node.output_size(); ++i) {
      op.out_bytes.push_back(spec.outputs[i].bytes() * options_.batch);
      if (node.output(i).empty()) continue;
      Tensor& t = tensors_[node.output(i)];
      t.producer = v;
      t.out_index = i;
      unknown = unknown || !spec.outputs[i].known;
    }
    for (size_t i = 0; i < spec.inputs.size(); ++i)
      if (spec.inputs[i].is_param) op.param_bytes += spec.inputs[i].bytes();
    if (unknown) summary_.unknown_shape_ops.push_back(op.name);
    // One edge per (producer, consumer): the largest tensor when an op reads several
    // outputs of the same producer.
    for (const std::string& in : node.input()) {
      if (in.empty()) continue;
      const Tensor& t = tensors_.at(in);
      if (t.kind != Kind::kData || t.producer < 0) continue;
      uint64_t key = (static_cast<uint64_t>(t.producer) << 32) | static_cast<uint32_t>(v);
      auto [it, fresh] = edge_index_.emplace(key, static_cast<int>(ops_.edges.size()));
      if (fresh) {
        ops_.edges.push_back({t.producer, v, t.out_index});
      } else {
        OpEdge& e = ops_.edges[it->second];
        const auto& outs = ops_.nodes[t.producer].out_bytes;
        if (outs[t.out_index] > outs[e.out]) e.out = t.out_index;
      }
    }
  }

  ImportResult finish(const onnx::GraphProto& g) {
    if (!summary_.unknown_shape_ops.empty())
      spdlog::warn("{}: {} ops have outputs of unknown shape (costed as empty), e.g. '{}'", source_,
                   summary_.unknown_shape_ops.size(), summary_.unknown_shape_ops[0]);
    // PyTorch names every graph "main_graph" or "torch-jit-export": the file says more.
    std::string stem = source_.substr(source_.find_last_of('/') + 1);
    ops_.name = stem.substr(
        0, stem.rfind(".onnx") == std::string::npos ? stem.size() : stem.rfind(".onnx"));
    if (ops_.name.empty()) ops_.name = g.name();
    if (options_.training) ops_ = add_training_ops(ops_);
    const DeviceProfile profile = resolve_device_profile(options_.profile);
    ImportResult r;
    r.graph = build_graph(ops_, profile, source_);
    summary_.onnx_nodes = g.node_size();
    summary_.ops = r.graph.num_nodes();
    summary_.edges = r.graph.num_edges();
    for (size_t v = 0; v < ops_.nodes.size(); ++v) {
      const OpNode& n = ops_.nodes[v];
      double cost = r.graph.cost_us(static_cast<NodeId>(v));
      summary_.total_flops += n.flops;
      summary_.total_cost_us += cost;
      summary_.param_bytes += n.param_bytes;
      summary_.cost_us_by_op_type[n.op_type] += cost;
      if (n.fallback) summary_.fallback_cost_us += cost;
    }
    if (summary_.total_cost_us > 0)
      summary_.fallback_share = summary_.fallback_cost_us / summary_.total_cost_us;
    r.ops = std::move(ops_);
    r.summary = std::move(summary_);
    return r;
  }

  std::string source_;
  ImportOptions options_;
  std::unordered_map<std::string, Tensor> tensors_;
  std::unordered_set<std::string> names_;
  std::vector<std::string> node_names_;  // unique name of every ONNX node, by index
  std::unordered_map<uint64_t, int> edge_index_;
  OpGraph ops_;
  ImportSummary summary_;
};

}  // namespace

ImportResult import_onnx_bytes(const std::string& bytes, const std::string& source,
                               const ImportOptions& options) {
  if (options.batch < 1)
    throw InputError("--batch must be >= 1, got " + std::to_string(options.batch));
  if (options.dynamic_dim < 1)
    throw InputError("the value of dynamic dimensions must be >= 1, got " +
                     std::to_string(options.dynamic_dim));
  try {
    resolve_device_profile(options.profile);  // fail early, before the import
  } catch (const InputError& e) {
    throw InputError(std::string("--profile: ") + e.what());
  }
  onnx::ModelProto model;
  if (bytes.empty()) throw_input_error(source, "", "the file is empty, not an ONNX model");
  if (!model.ParseFromString(bytes))
    throw_input_error(source, "",
                      "not an ONNX model: the protobuf does not parse (truncated, or another "
                      "format)");
  return Importer(source, options).run(model);
}

ImportResult import_onnx(const std::string& path, const ImportOptions& options) {
  return import_onnx_bytes(read_file(path), path, options);
}

}  // namespace placeto
