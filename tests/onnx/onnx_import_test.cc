// The importer on small ONNX models built here and written to real files.
#include "sim/onnx/onnx_import.h"

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>

#include "common/error.h"
#include "sim/graph_io.h"

namespace placeto {
namespace {

// Builds a ModelProto the way exporters do.
class ModelBuilder {
 public:
  explicit ModelBuilder(int64_t opset = 13) {
    m_.set_ir_version(8);
    auto* o = m_.add_opset_import();
    o->set_domain("");
    o->set_version(opset);
    m_.mutable_graph()->set_name("test");
  }
  void input(const std::string& name, std::vector<int64_t> shape, bool dynamic_first = false) {
    fill(m_.mutable_graph()->add_input(), name, shape, dynamic_first);
  }
  void output(const std::string& name) { m_.mutable_graph()->add_output()->set_name(name); }
  void float_initializer(const std::string& name, std::vector<int64_t> shape) {
    auto* t = m_.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    int64_t n = 1;
    for (int64_t d : shape) t->add_dims(d), n *= d;
    t->set_raw_data(std::string(n * 4, '\0'));
  }
  void int_initializer(const std::string& name, std::vector<int64_t> values) {
    auto* t = m_.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::INT64);
    t->add_dims(static_cast<int64_t>(values.size()));
    for (int64_t v : values) t->add_int64_data(v);
  }
  onnx::NodeProto* node(const std::string& op, std::vector<std::string> in,
                        std::vector<std::string> out, const std::string& name = "") {
    auto* n = m_.mutable_graph()->add_node();
    n->set_op_type(op);
    n->set_name(name);
    for (auto& s : in) n->add_input(s);
    for (auto& s : out) n->add_output(s);
    return n;
  }
  static void ints(onnx::NodeProto* n, const std::string& name, std::vector<int64_t> v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t x : v) a->add_ints(x);
  }
  static void int_attr(onnx::NodeProto* n, const std::string& name, int64_t v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
  }
  onnx::ModelProto& model() { return m_; }
  std::string bytes() const { return m_.SerializeAsString(); }

 private:
  static void fill(onnx::ValueInfoProto* v, const std::string& name,
                   const std::vector<int64_t>& shape, bool dynamic_first) {
    v->set_name(name);
    auto* tt = v->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(onnx::TensorProto::FLOAT);
    auto* s = tt->mutable_shape();
    for (size_t i = 0; i < shape.size(); ++i) {
      if (i == 0 && dynamic_first)
        s->add_dim()->set_dim_param("N");
      else
        s->add_dim()->set_dim_value(shape[i]);
    }
  }
  onnx::ModelProto m_;
};

// Conv(3x3, 16->32, bias) -> Identity -> Relu -> Relu (unnamed), on 1x16x8x8.
ModelBuilder ConvRelu(bool weights_as_inputs) {
  ModelBuilder b;
  b.input("x", {1, 16, 8, 8});
  if (weights_as_inputs) {
    b.input("w", {32, 16, 3, 3});
    b.input("bias", {32});
  } else {
    b.float_initializer("w", {32, 16, 3, 3});
    b.float_initializer("bias", {32});
  }
  auto* conv = b.node("Conv", {"x", "w", "bias"}, {"c"}, "conv1");
  ModelBuilder::ints(conv, "kernel_shape", {3, 3});
  ModelBuilder::ints(conv, "pads", {1, 1, 1, 1});
  b.node("Identity", {"c"}, {"c2"}, "id");
  b.node("Relu", {"c2"}, {"r"}, "act");
  b.node("Relu", {"r"}, {"y"});
  b.output("y");
  return b;
}

class TempFile {
 public:
  explicit TempFile(const std::string& content) {
    char name[] = "/tmp/placeto_onnx_test_XXXXXX";
    int fd = mkstemp(name);
    EXPECT_GE(fd, 0);
    close(fd);
    path_ = name;
    std::ofstream(path_, std::ios::binary) << content;
  }
  ~TempFile() { std::remove(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

const double kConvFlops = 2.0 * 32 * 64 * 16 * 9 + 32 * 64;

TEST(OnnxImportTest, ConvReluFromAFile) {
  TempFile f(ConvRelu(false).bytes());
  ImportResult r = import_onnx(f.path());
  const Graph& g = r.graph;
  // Identity folds away; the input becomes an op; the unnamed Relu is named by type and index.
  ASSERT_EQ(g.num_nodes(), 4);
  EXPECT_EQ(g.node_name(0), "x");
  EXPECT_EQ(g.op_type(0), "Input");
  EXPECT_EQ(g.cost_us(0), 0);
  NodeId conv = g.find("conv1"), act = g.find("act"), last = g.find("Relu_3");
  ASSERT_GE(conv, 0);
  ASSERT_GE(act, 0);
  ASSERT_GE(last, 0);
  EXPECT_EQ(g.param_bytes(conv), (32 * 16 * 9 + 32) * 4);
  EXPECT_EQ(g.out_bytes(conv, 0), 32 * 64 * 4);
  EXPECT_EQ(g.num_edges(), 3);
  EXPECT_EQ(g.edge_src(1), conv);  // conv -> act directly, through the folded Identity
  EXPECT_EQ(g.edge_dst(1), act);
  EXPECT_DOUBLE_EQ(r.ops.nodes[conv].flops, kConvFlops);
  EXPECT_DOUBLE_EQ(r.summary.total_flops, kConvFlops + 2 * 32 * 64);
  EXPECT_EQ(r.summary.fallback_share, 0);
  EXPECT_EQ(r.summary.data_inputs, std::vector<std::string>{"x"});
  EXPECT_NEAR(g.cost_us(conv),
              roofline_cost_us(kConvFlops, (16 + 32) * 64 * 4 + (32 * 16 * 9 + 32) * 4,
                               device_profile("k80")),
              1e-9);
}

TEST(OnnxImportTest, ModelsWithoutWeightsImportTheSame) {
  ImportResult with = import_onnx_bytes(ConvRelu(false).bytes(), "models/with.onnx");
  EXPECT_EQ(with.graph.name(), "with");  // the file's stem, not PyTorch's "main_graph"
  ImportResult without = import_onnx_bytes(ConvRelu(true).bytes(), "without");
  EXPECT_EQ(without.summary.data_inputs, std::vector<std::string>{"x"});
  EXPECT_EQ(without.graph.num_nodes(), with.graph.num_nodes());
  EXPECT_DOUBLE_EQ(without.summary.total_flops, with.summary.total_flops);
  EXPECT_EQ(without.summary.param_bytes, with.summary.param_bytes);
  EXPECT_DOUBLE_EQ(without.summary.total_cost_us, with.summary.total_cost_us);
}

TEST(OnnxImportTest, BatchScalesActivationsNotWeights) {
  ImportOptions o;
  o.batch = 8;
  ImportResult one = import_onnx_bytes(ConvRelu(false).bytes(), "m");
  ImportResult eight = import_onnx_bytes(ConvRelu(false).bytes(), "m", o);
  EXPECT_DOUBLE_EQ(eight.summary.total_flops, 8 * one.summary.total_flops);
  EXPECT_EQ(eight.summary.param_bytes, one.summary.param_bytes);
  NodeId conv = one.graph.find("conv1");
  EXPECT_EQ(eight.graph.out_bytes(conv, 0), 8 * one.graph.out_bytes(conv, 0));
  EXPECT_EQ(eight.graph.out_bytes(0, 0), 8 * one.graph.out_bytes(0, 0));
}

TEST(OnnxImportTest, DuplicateNamesAreMadeUnique) {
  ModelBuilder b;
  b.input("x", {4, 4});
  b.node("Relu", {"x"}, {"a"}, "act");
  b.node("Relu", {"a"}, {"b"}, "act");
  b.node("Relu", {"b"}, {"c"}, "x");  // the input's op yields: node names map back
  ImportResult r = import_onnx_bytes(b.bytes(), "m");
  EXPECT_GE(r.graph.find("act"), 0);
  EXPECT_GE(r.graph.find("act_2"), 0);
  EXPECT_EQ(r.graph.op_type(r.graph.find("x")), "Relu");
  EXPECT_EQ(r.graph.op_type(r.graph.find("x_2")), "Input");
  // The origins keep the names as in the file, told apart by the node index.
  const std::vector<OpOrigin> o = op_origins(r.ops);
  const OpOrigin& act2 = o[r.graph.find("act_2")];
  EXPECT_EQ(act2.role, OpRole::kForward);
  EXPECT_EQ(act2.name, "act");
  EXPECT_EQ(act2.node, 1);
  EXPECT_EQ(o[r.graph.find("act")].node, 0);
  EXPECT_EQ(o[r.graph.find("x")].node, 2);
  const OpOrigin& input = o[r.graph.find("x_2")];
  EXPECT_EQ(input.role, OpRole::kInput);
  EXPECT_EQ(input.name, "x");
  EXPECT_EQ(input.node, -1);
}

// Shape -> Gather -> Div -> Slice (starts/ends computed), as PyTorch writes q/k/v splits.
TEST(OnnxImportTest, ShapeArithmeticIsFoldedAndDropped) {
  ModelBuilder b;
  b.input("x", {64, 1, 768});
  b.int_initializer("two", {2});
  b.int_initializer("three", {3});
  b.int_initializer("zero", {0});
  b.int_initializer("axis", {2});
  b.node("Shape", {"x"}, {"s"}, "shape");
  auto* gather = b.node("Gather", {"s", "two"}, {"d"}, "gather");
  ModelBuilder::int_attr(gather, "axis", 0);
  b.node("Div", {"d", "three"}, {"third"}, "div");
  b.node("Slice", {"x", "zero", "third", "axis"}, {"q"}, "slice");
  b.node("Relu", {"q"}, {"y"}, "act");
  ImportResult r = import_onnx_bytes(b.bytes(), "m");
  ASSERT_EQ(r.graph.num_nodes(), 3);  // x, slice, act: shape arithmetic is not in the graph
  NodeId slice = r.graph.find("slice");
  ASSERT_GE(slice, 0);
  EXPECT_EQ(r.graph.out_bytes(slice, 0), 64 * 256 * 4);
  EXPECT_TRUE(r.summary.unknown_shape_ops.empty());
}

TEST(OnnxImportTest, DynamicDimensionsAreTakenAsOne) {
  ModelBuilder b;
  b.input("x", {0, 10}, /*dynamic_first=*/true);
  b.node("Relu", {"x"}, {"y"}, "act");
  ImportResult r = import_onnx_bytes(b.bytes(), "m");
  EXPECT_EQ(r.graph.out_bytes(r.graph.find("act"), 0), 40);
  EXPECT_EQ(r.summary.dynamic_dims, 1);
  ImportOptions o;
  o.dynamic_dim = 8;  // what `placeto profile --batch 8` sets
  ImportResult r8 = import_onnx_bytes(b.bytes(), "m", o);
  EXPECT_EQ(r8.graph.out_bytes(r8.graph.find("act"), 0), 8 * 40);
  EXPECT_EQ(r8.ops.nodes[r8.graph.find("act")].spec.inputs[0].shape, (std::vector<int64_t>{8, 10}));
}

// Every op keeps its class and (forward ops) the shapes `placeto profile` runs it with; a
// fitted profile file prices each class at its own rates.
TEST(OnnxImportTest, OpClassesAndAFittedProfileFile) {
  TempFile f(ConvRelu(false).bytes());
  ImportOptions o;
  o.training = true;
  ImportResult r = import_onnx(f.path(), o);
  const NodeId conv = r.graph.find("conv1"), grad = r.graph.find("conv1/grad");
  const NodeId update = r.graph.find("conv1/update"), act = r.graph.find("act");
  ASSERT_GE(update, 0);
  EXPECT_EQ(r.ops.nodes[conv].op_class, "conv");
  EXPECT_EQ(r.ops.nodes[grad].op_class, "conv_grad");
  EXPECT_EQ(r.ops.nodes[update].op_class, "update");
  EXPECT_EQ(r.ops.nodes[act].op_class, "elementwise");
  EXPECT_EQ(r.ops.nodes[conv].spec.op_type, "Conv");
  EXPECT_EQ(r.ops.nodes[conv].spec.inputs[1].shape, (std::vector<int64_t>{32, 16, 3, 3}));
  EXPECT_EQ(cost_class("Frobnicate"), "fallback");

  TempFile profile(
      "format: placeto-device-profile\nname: fitted\nbase: k80\nop_classes:\n"
      "  conv: {flops_per_s: 1.0e9, bytes_per_s: 1.0e12, overhead_us: 7}\n");
  ImportOptions fitted = o;
  fitted.profile = profile.path() + ".yaml";
  std::rename(profile.path().c_str(), fitted.profile.c_str());
  ImportResult q = import_onnx(f.path(), fitted);
  std::remove(fitted.profile.c_str());
  EXPECT_NEAR(q.graph.cost_us(conv), 7 + 1e6 * kConvFlops / 1e9, 1e-6);
  // Classes without a rate keep the base roofline.
  EXPECT_DOUBLE_EQ(q.graph.cost_us(act), r.graph.cost_us(act));
  EXPECT_DOUBLE_EQ(q.graph.cost_us(grad), r.graph.cost_us(grad));
  ImportOptions missing = o;
  missing.profile = "/nonexistent/fitted.yaml";
  EXPECT_THROW(import_onnx(f.path(), missing), InputError);
}

TEST(OnnxImportTest, UnknownOpTypesAreCostedByTheFallbackAndReported) {
  ModelBuilder b;
  b.input("x", {1, 1000});
  b.node("Relu", {"x"}, {"a"}, "act");
  auto* custom = b.node("FancyOp", {"a"}, {"y"}, "custom");
  custom->set_domain("com.example");
  b.model().mutable_graph()->add_value_info()->CopyFrom(b.model().graph().input(0));
  b.model().mutable_graph()->mutable_value_info(0)->set_name("y");
  auto* o = b.model().add_opset_import();
  o->set_domain("com.example");
  o->set_version(1);
  ImportResult r = import_onnx_bytes(b.bytes(), "m");
  EXPECT_EQ(r.summary.fallback_op_types.at("FancyOp"), 1);
  EXPECT_TRUE(r.ops.nodes[r.graph.find("custom")].fallback);
  EXPECT_DOUBLE_EQ(r.ops.nodes[r.graph.find("custom")].flops, 1000);
  EXPECT_GT(r.summary.fallback_share, 0.3);
  EXPECT_LT(r.summary.fallback_share, 0.7);
}

TEST(OnnxImportTest, TrainingGraphRoundTripsThroughAFile) {
  ImportOptions o;
  o.training = true;
  ImportResult r = import_onnx_bytes(ConvRelu(false).bytes(), "m", o);
  TempFile out("");
  save_graph(r.graph, out.path());
  Graph g = load_graph(out.path());
  EXPECT_EQ(g.num_nodes(), 4 + 3 + 1);
  NodeId update = g.find("conv1/update");
  ASSERT_GE(update, 0);
  EXPECT_EQ(g.param_bytes(update), (32 * 16 * 9 + 32) * 4);
  EXPECT_EQ(g.param_bytes(g.find("conv1")), 0);
  EXPECT_GE(g.find("Relu_3/grad"), 0);
  EXPECT_LT(g.find("x/grad"), 0);
  // Backward ops of an unnamed node and the update map back to their ONNX nodes (the
  // Identity at index 1 is folded away).
  const std::vector<OpOrigin> origins = op_origins(r.ops);
  const OpOrigin& relu_grad = origins[r.graph.find("Relu_3/grad")];
  EXPECT_EQ(relu_grad.role, OpRole::kGrad);
  EXPECT_EQ(relu_grad.name, "");
  EXPECT_EQ(relu_grad.node, 3);
  const OpOrigin& upd = origins[r.graph.find("conv1/update")];
  EXPECT_EQ(upd.role, OpRole::kUpdate);
  EXPECT_EQ(upd.name, "conv1");
  EXPECT_EQ(upd.node, 0);
}

void ExpectInputError(const std::string& bytes, const std::string& what) {
  TempFile f(bytes);
  try {
    import_onnx(f.path());
    FAIL() << "no error for " << what;
  } catch (const InputError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find(f.path()), std::string::npos) << msg;
    EXPECT_NE(msg.find(what), std::string::npos) << msg;
  }
}

TEST(OnnxImportTest, BadFilesAreInputErrorsNamingTheFile) {
  EXPECT_THROW(import_onnx("/nonexistent/model.onnx"), InputError);
  ExpectInputError("", "empty");
  ExpectInputError("this is a text file, not a model\n", "not an ONNX model");
  std::string full = ConvRelu(false).bytes();
  ExpectInputError(full.substr(0, full.size() / 2), "not an ONNX model");
  ModelBuilder no_graph;
  no_graph.model().clear_graph();
  ExpectInputError(no_graph.bytes(), "no graph");
  ModelBuilder future(99);
  future.input("x", {1});
  future.node("Relu", {"x"}, {"y"});
  ExpectInputError(future.bytes(), "unsupported opset 99");
  ModelBuilder dangling;
  dangling.input("x", {1});
  dangling.node("Add", {"x", "nowhere"}, {"y"}, "add");
  ExpectInputError(dangling.bytes(), "nowhere");
  // A zero stride made ONNX 1.12's shape inference divide by zero (fuzzing).
  ModelBuilder zero_stride;
  zero_stride.input("x", {1, 4, 8, 8});
  auto* pool = zero_stride.node("MaxPool", {"x"}, {"y"}, "pool");
  ModelBuilder::ints(pool, "kernel_shape", {2, 2});
  ModelBuilder::ints(pool, "strides", {0, 2});
  ExpectInputError(zero_stride.bytes(), "attribute strides has the value 0");
  ModelBuilder negative_pad = ConvRelu(false);
  ModelBuilder::ints(negative_pad.model().mutable_graph()->mutable_node(0), "dilations", {1, -1});
  ExpectInputError(negative_pad.bytes(), "dilations");
}

}  // namespace
}  // namespace placeto
