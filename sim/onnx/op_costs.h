// FLOPs and bytes moved by one ONNX op, from its input/output shapes and attributes: the
// numbers the roofline cost model (sim/cost_model.h) turns into microseconds.
//
// The types here are plain data, independent of protobuf, so that the cost rules can be
// tested on hand-written shapes.  Conventions (docs/IMPORT.md lists every rule):
//  * a multiply-add counts as 2 FLOPs; comparisons, adds and simple activations as 1; a
//    transcendental function (exp, tanh, sigmoid, erf, ...) as 4;
//  * `act_bytes` is the activation traffic: every non-parameter input read plus every output
//    written; `param_bytes` is the parameter (weight) traffic, kept apart because it does not
//    grow with the batch size;
//  * view ops (Reshape, Flatten, Squeeze, Unsqueeze, Identity, Dropout at inference) move
//    nothing; data-movement ops (Concat, Slice, Transpose, Gather, ...) move bytes, no FLOPs;
//  * an op type without a rule gets the fallback: 1 FLOP per output element and its full
//    activation traffic, with `fallback` set so that the importer can warn and report the share.
// Thread-safe: pure functions.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace placeto {

// a * b, clamped to the int64 range instead of overflowing: shapes come from untrusted
// model files, and an absurd tensor should cost absurdly much, not be undefined behaviour.
int64_t mul_saturating(int64_t a, int64_t b);

// One input or output tensor of an op.
struct TensorInfo {
  bool present = true;  // false for a skipped optional input ("" in ONNX)
  bool known = false;   // shape fully known (every dim >= 0)
  std::vector<int64_t> shape;
  int64_t elem_bytes = 4;
  bool is_param = false;  // a weight/bias (initializer or parameter graph input)

  int64_t elements() const;  // product of dims (1 for a scalar; 0 when not known)
  int64_t bytes() const { return mul_saturating(elements(), elem_bytes); }
  int rank() const { return static_cast<int>(shape.size()); }
  // Dimension `i`, negative indices counted from the back; 1 when out of range or unknown.
  int64_t dim(int i) const;
};

// The attributes of an op that the cost and shape rules use (ints, floats, strings).
struct OpAttributes {
  std::map<std::string, std::vector<int64_t>> ints;  // INT and INTS attributes
  std::map<std::string, double> floats;
  std::map<std::string, std::string> strings;

  int64_t get_int(const std::string& name, int64_t fallback) const;
  std::vector<int64_t> get_ints(const std::string& name) const;  // empty when absent
  bool has(const std::string& name) const { return ints.count(name) > 0; }
};

struct OpSpec {
  std::string op_type;
  std::string domain;  // "" for the default ONNX domain
  std::vector<TensorInfo> inputs;
  std::vector<TensorInfo> outputs;
  OpAttributes attrs;
};

struct OpCost {
  double flops = 0;
  double act_bytes = 0;
  double param_bytes = 0;
  bool fallback = false;  // no rule for this op type: see the header comment
};

// The cost of one op.  Unknown shapes count as 0 elements, so an op whose shapes could not
// be inferred costs only its launch overhead (the importer warns about those).
OpCost op_cost(const OpSpec& op);

// Whether `op_type` (in `domain`) has a cost rule; false means op_cost() uses the fallback.
bool has_cost_rule(const std::string& op_type, const std::string& domain = "");

// The class of an op type for fitted device profiles (sim/cost_model.h OpClassRate): its cost
// family, one of conv, gemm, matmul, norm, pool, elementwise, softmax, reduce, recurrent,
// data_movement, view, or fallback for op types without a rule.
std::string cost_class(const std::string& op_type, const std::string& domain = "");

// Op types whose output is an alias of the input (no kernel at all).  The importer folds them
// away instead of making graph nodes.
bool is_alias_op(const std::string& op_type);

// The cost families, one per kind of op (exposed for the unit tests).
OpCost conv_cost(const OpSpec& op);           // Conv, ConvTranspose (groups, dilations)
OpCost gemm_cost(const OpSpec& op);           // Gemm
OpCost matmul_cost(const OpSpec& op);         // MatMul (batched, broadcast), MatMulInteger
OpCost normalization_cost(const OpSpec& op);  // BatchNormalization, Instance/Layer/Group norm
OpCost pool_cost(const OpSpec& op);           // Max/Average/Lp pool, their Global forms
OpCost elementwise_cost(const OpSpec& op);    // unary, binary (broadcast) and variadic maps
OpCost softmax_cost(const OpSpec& op);        // Softmax, LogSoftmax, Hardmax
OpCost reduce_cost(const OpSpec& op);         // Reduce*, ArgMax, ArgMin
OpCost recurrent_cost(const OpSpec& op);      // LSTM, GRU, RNN (all steps, all directions)
OpCost data_movement_cost(const OpSpec& op);  // Concat, Split, Slice, Transpose, Gather, ...
OpCost view_cost(const OpSpec& op);           // Reshape, Flatten, Squeeze, Unsqueeze, ...
OpCost fallback_cost(const OpSpec& op);

}  // namespace placeto
