#include "sim/onnx/op_costs.h"

#include <algorithm>
#include <functional>
#include <unordered_map>
#include <unordered_set>

namespace placeto {

int64_t mul_saturating(int64_t a, int64_t b) {
  int64_t r = 0;
  if (!__builtin_mul_overflow(a, b, &r)) return r;
  return (a < 0) != (b < 0) ? INT64_MIN : INT64_MAX;
}

int64_t TensorInfo::elements() const {
  if (!present || !known) return 0;
  int64_t n = 1;
  for (int64_t d : shape) n = mul_saturating(n, d);
  return n;
}

int64_t TensorInfo::dim(int i) const {
  int r = rank();
  if (i < 0) i += r;
  if (!known || i < 0 || i >= r) return 1;
  return shape[i];
}

int64_t OpAttributes::get_int(const std::string& name, int64_t fallback) const {
  auto it = ints.find(name);
  return it == ints.end() || it->second.empty() ? fallback : it->second[0];
}

std::vector<int64_t> OpAttributes::get_ints(const std::string& name) const {
  auto it = ints.find(name);
  return it == ints.end() ? std::vector<int64_t>{} : it->second;
}

namespace {

double out_elements(const OpSpec& op) {
  double n = 0;
  for (const TensorInfo& t : op.outputs) n += static_cast<double>(t.elements());
  return n;
}

const TensorInfo& input(const OpSpec& op, size_t i) {
  static const TensorInfo kAbsent = [] {
    TensorInfo t;
    t.present = false;
    return t;
  }();
  return i < op.inputs.size() ? op.inputs[i] : kAbsent;
}

const TensorInfo& output(const OpSpec& op, size_t i) {
  return i < op.outputs.size() ? op.outputs[i] : input(op, op.inputs.size());
}

// Every non-parameter input read once, every output written once; parameters apart.
OpCost full_traffic(const OpSpec& op) {
  OpCost c;
  for (const TensorInfo& t : op.inputs) {
    if (t.is_param)
      c.param_bytes += static_cast<double>(t.bytes());
    else
      c.act_bytes += static_cast<double>(t.bytes());
  }
  for (const TensorInfo& t : op.outputs) c.act_bytes += static_cast<double>(t.bytes());
  return c;
}

int64_t product(const std::vector<int64_t>& v, size_t from = 0) {
  int64_t p = 1;
  for (size_t i = from; i < v.size(); ++i) p = mul_saturating(p, v[i]);
  return p;
}

// FLOPs per output element of the element-wise ops.  Transcendentals count 4 (a common
// convention for exp/log/tanh on GPUs, where they run in the special-function units).
const std::unordered_map<std::string, double>& elementwise_factors() {
  static const std::unordered_map<std::string, double> kFactors = {
      {"Add", 1},
      {"Sub", 1},
      {"Mul", 1},
      {"Div", 1},
      {"Max", 1},
      {"Min", 1},
      {"Sum", 1},
      {"Mean", 1},
      {"Relu", 1},
      {"LeakyRelu", 2},
      {"PRelu", 2},
      {"Clip", 2},
      {"Abs", 1},
      {"Neg", 1},
      {"Sign", 1},
      {"Floor", 1},
      {"Ceil", 1},
      {"Round", 1},
      {"Reciprocal", 1},
      {"Mod", 1},
      {"Equal", 1},
      {"Less", 1},
      {"Greater", 1},
      {"LessOrEqual", 1},
      {"GreaterOrEqual", 1},
      {"Not", 1},
      {"And", 1},
      {"Or", 1},
      {"Xor", 1},
      {"Where", 1},
      {"IsNaN", 1},
      {"IsInf", 1},
      {"BitShift", 1},
      {"Sqrt", 4},
      {"Exp", 4},
      {"Log", 4},
      {"Pow", 4},
      {"Tanh", 4},
      {"Sigmoid", 4},
      {"HardSigmoid", 3},
      {"Erf", 4},
      {"Elu", 4},
      {"Selu", 5},
      {"Celu", 5},
      {"Softplus", 4},
      {"Softsign", 3},
      {"HardSwish", 4},
      {"Mish", 12},
      {"Gelu", 8},
      {"Sin", 4},
      {"Cos", 4},
      {"Tan", 4},
      {"Asin", 4},
      {"Acos", 4},
      {"Atan", 4},
      {"Sinh", 4},
      {"Cosh", 4},
      {"Asinh", 4},
      {"Acosh", 4},
      {"Atanh", 4},
      {"ThresholdedRelu", 1},
      {"Shrink", 2},
      {"QuantizeLinear", 3},
      {"DequantizeLinear", 2},
  };
  return kFactors;
}

const std::unordered_set<std::string>& view_ops() {
  static const std::unordered_set<std::string> kOps = {
      "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity", "Dropout", "Shape", "Size"};
  return kOps;
}

using CostRule = std::function<OpCost(const OpSpec&)>;

// The rule of each op type and its class (the family's name; sim/cost_model.h OpClassRate).
struct CostFamily {
  CostRule rule;
  const char* op_class = "";
};

const std::unordered_map<std::string, CostFamily>& rules() {
  static const std::unordered_map<std::string, CostFamily> kRules = [] {
    std::unordered_map<std::string, CostFamily> r;
    for (const char* t : {"Conv", "ConvTranspose", "ConvInteger"}) r[t] = {conv_cost, "conv"};
    r["Gemm"] = {gemm_cost, "gemm"};
    for (const char* t : {"MatMul", "MatMulInteger"}) r[t] = {matmul_cost, "matmul"};
    for (const char* t :
         {"BatchNormalization", "InstanceNormalization", "LayerNormalization", "GroupNormalization",
          "LpNormalization", "MeanVarianceNormalization", "LRN"})
      r[t] = {normalization_cost, "norm"};
    for (const char* t :
         {"MaxPool", "AveragePool", "LpPool", "GlobalAveragePool", "GlobalMaxPool", "GlobalLpPool"})
      r[t] = {pool_cost, "pool"};
    for (const auto& [t, f] : elementwise_factors()) r[t] = {elementwise_cost, "elementwise"};
    for (const char* t : {"Softmax", "LogSoftmax", "Hardmax"}) r[t] = {softmax_cost, "softmax"};
    for (const char* t :
         {"ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
          "ReduceSumSquare", "ReduceLogSum", "ReduceLogSumExp", "ArgMax", "ArgMin", "CumSum"})
      r[t] = {reduce_cost, "reduce"};
    for (const char* t : {"LSTM", "GRU", "RNN"}) r[t] = {recurrent_cost, "recurrent"};
    for (const char* t : {"Concat",
                          "Split",
                          "Slice",
                          "Transpose",
                          "Gather",
                          "GatherElements",
                          "GatherND",
                          "ScatterND",
                          "ScatterElements",
                          "Pad",
                          "Expand",
                          "Tile",
                          "Cast",
                          "CastLike",
                          "Resize",
                          "Upsample",
                          "DepthToSpace",
                          "SpaceToDepth",
                          "OneHot",
                          "Range",
                          "ConstantOfShape",
                          "Trilu",
                          "Compress",
                          "NonZero",
                          "ReverseSequence",
                          "TopK"})
      r[t] = {data_movement_cost, "data_movement"};
    for (const std::string& t : view_ops()) r[t] = {view_cost, "view"};
    return r;
  }();
  return kRules;
}

}  // namespace

bool has_cost_rule(const std::string& op_type, const std::string& domain) {
  if (!domain.empty() && domain != "ai.onnx") return false;
  return rules().count(op_type) > 0;
}

bool is_alias_op(const std::string& op_type) { return op_type == "Identity"; }

OpCost op_cost(const OpSpec& op) {
  if (!has_cost_rule(op.op_type, op.domain)) return fallback_cost(op);
  return rules().at(op.op_type).rule(op);
}

std::string cost_class(const std::string& op_type, const std::string& domain) {
  if (!has_cost_rule(op_type, domain)) return "fallback";
  return rules().at(op_type).op_class;
}

OpCost conv_cost(const OpSpec& op) {
  OpCost c = full_traffic(op);
  const TensorInfo& x = input(op, 0);
  const TensorInfo& w = input(op, 1);
  const TensorInfo& y = output(op, 0);
  int64_t group = op.attrs.get_int("group", 1);
  // Multiply-adds per element: everything a weight slice spans but its first dimension.
  int64_t macs_per_elem;
  if (w.known && w.rank() >= 2) {
    macs_per_elem = product(w.shape, 1);
  } else {
    int64_t channels = op.op_type == "ConvTranspose" ? y.dim(1) : x.dim(1);
    macs_per_elem = mul_saturating(channels / std::max<int64_t>(group, 1),
                                   product(op.attrs.get_ints("kernel_shape")));
  }
  // A transposed convolution scatters every input element over its kernel window.
  double elems = static_cast<double>(op.op_type == "ConvTranspose" ? x.elements() : y.elements());
  c.flops = 2.0 * elems * static_cast<double>(macs_per_elem);
  if (input(op, 2).present) c.flops += static_cast<double>(y.elements());  // bias
  return c;
}

OpCost gemm_cost(const OpSpec& op) {
  OpCost c = full_traffic(op);
  const TensorInfo& a = input(op, 0);
  const TensorInfo& y = output(op, 0);
  int64_t k = op.attrs.get_int("transA", 0) ? a.dim(0) : a.dim(1);
  c.flops = 2.0 * static_cast<double>(y.elements()) * static_cast<double>(k);
  if (input(op, 2).present) c.flops += static_cast<double>(y.elements());  // + beta * C
  return c;
}

OpCost matmul_cost(const OpSpec& op) {
  OpCost c = full_traffic(op);
  // Y = A @ B with batch dims broadcast: each output element is a K-long dot product.
  int64_t k = input(op, 0).dim(-1);
  c.flops = 2.0 * static_cast<double>(output(op, 0).elements()) * static_cast<double>(k);
  return c;
}

OpCost normalization_cost(const OpSpec& op) {
  OpCost c = full_traffic(op);
  double n = static_cast<double>(input(op, 0).elements());
  if (op.op_type == "BatchNormalization" && op.attrs.get_int("training_mode", 0) == 0) {
    c.flops = 2 * n;  // running statistics fold into one scale and one shift per channel
  } else if (op.op_type == "LRN") {
    c.flops = (2.0 * static_cast<double>(op.attrs.get_int("size", 5)) + 6) * n;
  } else {
    c.flops = 7 * n;  // mean (1), variance (2), normalise (2), scale and shift (2)
  }
  return c;
}

OpCost pool_cost(const OpSpec& op) {
  OpCost c = full_traffic(op);
  const std::string& t = op.op_type;
  double per = t == "LpPool" || t == "GlobalLpPool" ? 2 : 1;
  if (t.rfind("Global", 0) == 0) {
    c.flops = per * static_cast<double>(input(op, 0).elements());
  } else {
    c.flops = per * static_cast<double>(output(op, 0).elements()) *
              static_cast<double>(product(op.attrs.get_ints("kernel_shape")));
  }
  return c;
}

OpCost elementwise_cost(const OpSpec& op) {
  OpCost c = full_traffic(op);
  auto it = elementwise_factors().find(op.op_type);
  double factor = it == elementwise_factors().end() ? 1 : it->second;
  // Variadic ops (Sum, Max, Mean, ...) combine n inputs with n-1 operations per element.
  const std::string& t = op.op_type;
  double arity = 1;
  if ((t == "Sum" || t == "Max" || t == "Min" || t == "Mean") && op.inputs.size() > 2)
    arity = static_cast<double>(op.inputs.size() - 1);
  c.flops = factor * arity * static_cast<double>(output(op, 0).elements());
  return c;
}

OpCost softmax_cost(const OpSpec& op) {
  OpCost c = full_traffic(op);
  // max, subtract, exp (4), sum, divide (or log): 8 FLOPs per element; Hardmax is an argmax.
  double per = op.op_type == "Hardmax" ? 1 : 8;
  c.flops = per * static_cast<double>(input(op, 0).elements());
  return c;
}

OpCost reduce_cost(const OpSpec& op) {
  OpCost c = full_traffic(op);
  const std::string& t = op.op_type;
  double per = t == "ReduceSumSquare" || t == "ReduceL2" || t == "ReduceLogSumExp" ? 2 : 1;
  if (t == "ReduceLogSumExp") per = 5;
  c.flops = per * static_cast<double>(input(op, 0).elements());
  return c;
}

OpCost recurrent_cost(const OpSpec& op) {
  OpCost c = full_traffic(op);
  const TensorInfo& x = input(op, 0);
  const TensorInfo& w = input(op, 1);
  // X is (seq, batch, input) or, with layout=1, (batch, seq, input).
  bool batch_first = op.attrs.get_int("layout", 0) == 1;
  double seq = static_cast<double>(x.dim(batch_first ? 1 : 0));
  double batch = static_cast<double>(x.dim(batch_first ? 0 : 1));
  double in = static_cast<double>(x.dim(2));
  double dirs = static_cast<double>(w.known ? w.dim(0) : 1);
  double h = static_cast<double>(op.attrs.get_int("hidden_size", 0));
  double gates, cell;  // gate count, and element-wise FLOPs per hidden unit and step
  if (op.op_type == "LSTM") {
    gates = 4, cell = 3 * 4 + 2 * 4 + 4;  // 3 sigmoids, 2 tanh, 3 muls and an add
  } else if (op.op_type == "GRU") {
    gates = 3, cell = 2 * 4 + 4 + 5;  // 2 sigmoids, 1 tanh, the gating arithmetic
  } else {
    gates = 1, cell = 4;  // one tanh
  }
  // Per step: the input and recurrent projections of all gates, both bias vectors, the cell.
  double per_step = 2 * gates * h * (in + h) + 2 * gates * h + cell * h;
  c.flops = seq * dirs * batch * per_step;
  return c;
}

OpCost data_movement_cost(const OpSpec& op) {
  const std::string& t = op.op_type;
  if (t == "Slice" || t == "Gather" || t == "GatherND" || t == "GatherElements" ||
      t == "Compress") {
    // Only the selected part is read: an embedding lookup reads rows, not the whole table.
    OpCost c;
    double out = static_cast<double>(output(op, 0).bytes());
    if (input(op, 0).is_param)
      c.param_bytes = out;
    else
      c.act_bytes = out;
    c.act_bytes += out;
    for (size_t i = 1; i < op.inputs.size(); ++i)
      c.act_bytes += static_cast<double>(op.inputs[i].bytes());
    return c;
  }
  OpCost c = full_traffic(op);
  if (t == "Resize" || t == "Upsample") c.flops = 4 * out_elements(op);  // bilinear taps
  if (t == "TopK") c.flops = static_cast<double>(input(op, 0).elements()) * 4;
  return c;
}

OpCost view_cost(const OpSpec&) { return OpCost{}; }

OpCost fallback_cost(const OpSpec& op) {
  OpCost c = full_traffic(op);
  c.flops = out_elements(op);
  c.fallback = true;
  return c;
}

}  // namespace placeto
