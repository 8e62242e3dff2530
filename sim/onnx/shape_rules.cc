#include "sim/onnx/shape_rules.h"

#include <algorithm>
#include <unordered_set>

namespace placeto {
namespace {

bool is_broadcast_op(const std::string& t) {
  static const std::unordered_set<std::string> kOps = {
      "Add",     "Sub",  "Mul",     "Div",         "Pow",
      "Max",     "Min",  "Sum",     "Mean",        "Mod",
      "Equal",   "Less", "Greater", "LessOrEqual", "GreaterOrEqual",
      "And",     "Or",   "Xor",     "Where",       "PRelu",
      "BitShift"};
  return kOps.count(t) > 0;
}

// Ops whose first output has the shape of their first input.
bool is_same_shape_op(const std::string& t) {
  static const std::unordered_set<std::string> kOps = {"Relu",
                                                       "LeakyRelu",
                                                       "Elu",
                                                       "Selu",
                                                       "Celu",
                                                       "Sigmoid",
                                                       "HardSigmoid",
                                                       "HardSwish",
                                                       "Tanh",
                                                       "Exp",
                                                       "Log",
                                                       "Sqrt",
                                                       "Reciprocal",
                                                       "Neg",
                                                       "Abs",
                                                       "Erf",
                                                       "Sign",
                                                       "Floor",
                                                       "Ceil",
                                                       "Round",
                                                       "Not",
                                                       "Clip",
                                                       "Softplus",
                                                       "Softsign",
                                                       "Mish",
                                                       "Gelu",
                                                       "Sin",
                                                       "Cos",
                                                       "Softmax",
                                                       "LogSoftmax",
                                                       "Hardmax",
                                                       "Cast",
                                                       "CastLike",
                                                       "Identity",
                                                       "Dropout",
                                                       "BatchNormalization",
                                                       "InstanceNormalization",
                                                       "LayerNormalization",
                                                       "GroupNormalization",
                                                       "LpNormalization",
                                                       "LRN",
                                                       "IsNaN",
                                                       "IsInf",
                                                       "CumSum",
                                                       "ThresholdedRelu",
                                                       "Shrink",
                                                       "Trilu",
                                                       "QuantizeLinear",
                                                       "DequantizeLinear"};
  return kOps.count(t) > 0;
}

int64_t normalize_axis(int64_t axis, int64_t rank) { return axis < 0 ? axis + rank : axis; }

// Axes from input `index` when it is given (newer opsets), otherwise from attribute "axes".
std::optional<std::vector<int64_t>> axes_of(const OpSpec& op, const std::vector<StaticValue>& v,
                                            size_t index) {
  if (index < op.inputs.size() && op.inputs[index].present) {
    if (index < v.size() && v[index]) return v[index];
    return std::nullopt;
  }
  return op.attrs.get_ints("axes");
}

void set_shape(TensorInfo& t, std::vector<int64_t> shape) {
  for (int64_t d : shape)
    if (d < 0) return;
  t.shape = std::move(shape);
  t.known = true;
}

std::optional<std::vector<int64_t>> slice_shape(const OpSpec& op,
                                                const std::vector<StaticValue>& v) {
  const TensorInfo& x = op.inputs[0];
  std::vector<int64_t> starts, ends, axes, steps;
  if (op.inputs.size() >= 3) {  // opset >= 10: starts, ends, axes, steps are inputs
    for (size_t i = 1; i < 3; ++i)
      if (i >= v.size() || !v[i]) return std::nullopt;
    starts = *v[1];
    ends = *v[2];
    if (op.inputs.size() > 3 && op.inputs[3].present) {
      if (!v[3]) return std::nullopt;
      axes = *v[3];
    }
    if (op.inputs.size() > 4 && op.inputs[4].present) {
      if (!v[4]) return std::nullopt;
      steps = *v[4];
    }
  } else {
    starts = op.attrs.get_ints("starts");
    ends = op.attrs.get_ints("ends");
    axes = op.attrs.get_ints("axes");
  }
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
    return std::nullopt;
  std::vector<int64_t> out = x.shape;
  for (size_t i = 0; i < starts.size(); ++i) {
    int64_t a = normalize_axis(axes[i], x.rank());
    if (a < 0 || a >= x.rank() || steps[i] == 0) return std::nullopt;
    int64_t dim = x.shape[a];
    auto clamp = [&](int64_t p, int64_t lo, int64_t hi) {
      if (p < 0) p += dim;
      return std::min(std::max(p, lo), hi);
    };
    int64_t n;
    if (steps[i] > 0) {
      int64_t s = clamp(starts[i], 0, dim), e = clamp(ends[i], 0, dim);
      n = e > s ? (e - s + steps[i] - 1) / steps[i] : 0;
    } else {
      int64_t s = clamp(starts[i], -1, dim - 1), e = clamp(ends[i], -1, dim - 1);
      n = s > e ? (s - e - steps[i] - 1) / -steps[i] : 0;
    }
    out[a] = n;
  }
  return out;
}

std::optional<std::vector<int64_t>> reshape_shape(const TensorInfo& x,
                                                  const std::vector<int64_t>& target,
                                                  bool allow_zero) {
  std::vector<int64_t> out = target;
  int64_t known = 1, infer = -1;
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] == 0 && !allow_zero) {
      if (static_cast<int>(i) >= x.rank()) return std::nullopt;
      out[i] = x.shape[i];
    }
    if (out[i] < -1) return std::nullopt;  // invalid target dim
    if (out[i] == -1) {
      if (infer >= 0) return std::nullopt;
      infer = static_cast<int64_t>(i);
    } else {
      known = mul_saturating(known, out[i]);
    }
  }
  if (infer >= 0) {
    if (known == 0) return std::nullopt;
    out[infer] = x.elements() / known;
  }
  return out;
}

}  // namespace

std::optional<std::vector<int64_t>> broadcast_shapes(const std::vector<int64_t>& a,
                                                     const std::vector<int64_t>& b) {
  size_t r = std::max(a.size(), b.size());
  std::vector<int64_t> out(r);
  for (size_t i = 0; i < r; ++i) {
    int64_t da = i < r - a.size() ? 1 : a[i - (r - a.size())];
    int64_t db = i < r - b.size() ? 1 : b[i - (r - b.size())];
    if (da != db && da != 1 && db != 1) return std::nullopt;
    out[i] = da == 1 ? db : da;
  }
  return out;
}

std::vector<StaticValue> evaluate_static(const OpSpec& op, const std::vector<StaticValue>& v) {
  std::vector<StaticValue> out(op.outputs.size());
  if (out.empty()) return out;
  const std::string& t = op.op_type;
  auto in = [&](size_t i) -> const StaticValue& {
    static const StaticValue kNone;
    return i < v.size() ? v[i] : kNone;
  };
  if (t == "Shape") {
    const TensorInfo& x = op.inputs[0];
    if (!x.known) return out;
    int64_t r = x.rank();
    int64_t s = std::clamp(normalize_axis(op.attrs.get_int("start", 0), r), int64_t{0}, r);
    int64_t e = std::clamp(normalize_axis(op.attrs.get_int("end", r), r), int64_t{0}, r);
    out[0] = std::vector<int64_t>(x.shape.begin() + s, x.shape.begin() + std::max(s, e));
    return out;
  }
  if (t == "Size") {
    if (op.inputs[0].known) out[0] = std::vector<int64_t>{op.inputs[0].elements()};
    return out;
  }
  if (t == "Identity" || t == "Cast" || t == "Reshape" || t == "Unsqueeze" || t == "Squeeze" ||
      t == "Flatten") {
    out[0] = in(0);
    return out;
  }
  if (t == "Concat") {
    std::vector<int64_t> all;
    for (size_t i = 0; i < op.inputs.size(); ++i) {
      if (!in(i)) return out;
      all.insert(all.end(), in(i)->begin(), in(i)->end());
    }
    out[0] = all;
    return out;
  }
  if (t == "Gather" && in(0) && in(1)) {
    std::vector<int64_t> r;
    int64_t n = static_cast<int64_t>(in(0)->size());
    for (int64_t idx : *in(1)) {
      if (idx < 0) idx += n;
      if (idx < 0 || idx >= n) return out;
      r.push_back((*in(0))[idx]);
    }
    out[0] = r;
    return out;
  }
  if (t == "Slice" && in(0) && op.inputs[0].rank() <= 1) {
    OpSpec one = op;
    one.inputs[0].shape = {static_cast<int64_t>(in(0)->size())};
    one.inputs[0].known = true;
    auto shape = slice_shape(one, v);
    std::vector<int64_t> starts =
        op.inputs.size() >= 3 && in(1) ? *in(1) : op.attrs.get_ints("starts");
    std::vector<int64_t> steps = op.inputs.size() >= 5 && in(4) ? *in(4) : std::vector<int64_t>{1};
    if (!shape || starts.size() != 1 || steps.size() != 1) return out;
    int64_t n = static_cast<int64_t>(in(0)->size());
    int64_t s = starts[0] < 0 ? starts[0] + n : starts[0];
    s = steps[0] > 0 ? std::clamp(s, int64_t{0}, n) : std::clamp(s, int64_t{-1}, n - 1);
    std::vector<int64_t> r;
    for (int64_t i = 0; i < (*shape)[0]; ++i) r.push_back((*in(0))[s + i * steps[0]]);
    out[0] = r;
    return out;
  }
  if ((t == "Add" || t == "Sub" || t == "Mul" || t == "Div" || t == "Equal") && in(0) && in(1)) {
    const auto &a = *in(0), &b = *in(1);
    size_t n = std::max(a.size(), b.size());
    if ((a.size() != n && a.size() != 1) || (b.size() != n && b.size() != 1)) return out;
    std::vector<int64_t> r(n);
    for (size_t i = 0; i < n; ++i) {
      int64_t x = a[a.size() == 1 ? 0 : i], y = b[b.size() == 1 ? 0 : i];
      // Values from the file: an overflowing result is simply not known statically.
      bool overflow = false;
      if (t == "Add") overflow = __builtin_add_overflow(x, y, &r[i]);
      if (t == "Sub") overflow = __builtin_sub_overflow(x, y, &r[i]);
      if (t == "Mul") overflow = __builtin_mul_overflow(x, y, &r[i]);
      if (t == "Div") {
        if (y == 0 || (x == INT64_MIN && y == -1)) return out;
        r[i] = x / y;
      }
      if (overflow) return out;
      if (t == "Equal") r[i] = x == y;
    }
    out[0] = r;
    return out;
  }
  if (t == "Where" && in(0) && in(1) && in(2)) {
    const auto &c = *in(0), &a = *in(1), &b = *in(2);
    size_t n = std::max({c.size(), a.size(), b.size()});
    for (const auto* x : {&c, &a, &b})
      if (x->size() != n && x->size() != 1) return out;
    std::vector<int64_t> r(n);
    for (size_t i = 0; i < n; ++i) {
      auto at = [&](const std::vector<int64_t>& x) { return x[x.size() == 1 ? 0 : i]; };
      r[i] = at(c) ? at(a) : at(b);
    }
    out[0] = r;
    return out;
  }
  if (t == "ConstantOfShape" && in(0)) {
    int64_t n = 1;
    for (int64_t d : *in(0)) n = mul_saturating(n, d);
    if (in(0)->size() <= 1 && n >= 0 && n <= 64)
      out[0] = std::vector<int64_t>(n, op.attrs.get_int("value", 0));
    return out;
  }
  if (t == "Range" && in(0) && in(1) && in(2) && in(0)->size() == 1 && in(1)->size() == 1 &&
      in(2)->size() == 1 && (*in(2))[0] != 0) {
    std::vector<int64_t> r;
    int64_t start = (*in(0))[0], limit = (*in(1))[0], delta = (*in(2))[0];
    for (int64_t x = start; delta > 0 ? x < limit : x > limit;) {
      if (r.size() > 4096) return out;
      r.push_back(x);
      if (__builtin_add_overflow(x, delta, &x)) break;  // past the int64 range: done
    }
    out[0] = r;
  }
  return out;
}

void infer_missing_shapes(OpSpec& op, const std::vector<StaticValue>& v) {
  if (op.outputs.empty() || op.outputs[0].known) return;
  const std::string& t = op.op_type;
  std::vector<TensorInfo>& ins = op.inputs;
  TensorInfo& y = op.outputs[0];
  auto known = [&](size_t i) { return i < ins.size() && ins[i].present && ins[i].known; };
  auto value = [&](size_t i) -> StaticValue { return i < v.size() ? v[i] : std::nullopt; };

  if (is_same_shape_op(t)) {
    if (known(0)) set_shape(y, ins[0].shape);
  } else if (is_broadcast_op(t)) {
    std::optional<std::vector<int64_t>> s = std::vector<int64_t>{};
    for (size_t i = 0; i < ins.size() && s; ++i) {
      if (!known(i)) return;
      s = broadcast_shapes(*s, ins[i].shape);
    }
    if (s) set_shape(y, *s);
  } else if (t == "Slice") {
    if (!known(0)) return;
    if (auto s = slice_shape(op, v)) set_shape(y, *s);
  } else if (t == "Expand") {
    if (!known(0) || !value(1)) return;
    if (auto s = broadcast_shapes(ins[0].shape, *value(1))) set_shape(y, *s);
  } else if (t == "Reshape") {
    if (!known(0) || !value(1)) return;
    if (auto s = reshape_shape(ins[0], *value(1), op.attrs.get_int("allowzero", 0) != 0))
      set_shape(y, *s);
  } else if (t == "Transpose") {
    if (!known(0)) return;
    std::vector<int64_t> perm = op.attrs.get_ints("perm");
    if (perm.empty())
      for (int i = ins[0].rank() - 1; i >= 0; --i) perm.push_back(i);
    if (static_cast<int>(perm.size()) != ins[0].rank()) return;
    std::vector<int64_t> s;
    for (int64_t p : perm) s.push_back(ins[0].dim(static_cast<int>(p)));
    set_shape(y, s);
  } else if (t == "Unsqueeze") {
    auto axes = axes_of(op, v, 1);
    if (!known(0) || !axes) return;
    int64_t r = ins[0].rank() + static_cast<int64_t>(axes->size());
    std::vector<int64_t> s(r, -1);
    for (int64_t a : *axes) {
      a = normalize_axis(a, r);
      if (a < 0 || a >= r) return;
      s[a] = 1;
    }
    size_t j = 0;
    for (int64_t& d : s)
      if (d < 0) d = ins[0].shape[j++];
    set_shape(y, s);
  } else if (t == "Squeeze") {
    auto axes = axes_of(op, v, 1);
    if (!known(0) || !axes) return;
    std::vector<int64_t> s;
    for (int i = 0; i < ins[0].rank(); ++i) {
      bool drop = axes->empty() ? ins[0].shape[i] == 1
                                : std::count_if(axes->begin(), axes->end(), [&](int64_t a) {
                                    return normalize_axis(a, ins[0].rank()) == i;
                                  }) > 0;
      if (!drop) s.push_back(ins[0].shape[i]);
    }
    set_shape(y, s);
  } else if (t == "Concat") {
    if (!known(0)) return;
    std::vector<int64_t> s = ins[0].shape;
    int64_t a = normalize_axis(op.attrs.get_int("axis", 0), ins[0].rank());
    if (a < 0 || a >= ins[0].rank()) return;
    for (size_t i = 1; i < ins.size(); ++i) {
      if (!known(i) || ins[i].rank() != ins[0].rank()) return;
      s[a] += ins[i].shape[a];
    }
    set_shape(y, s);
  } else if (t == "MatMul") {
    if (!known(0) || !known(1) || ins[0].rank() < 1 || ins[1].rank() < 1) return;
    std::vector<int64_t> a = ins[0].shape, b = ins[1].shape;
    bool a1 = a.size() == 1, b1 = b.size() == 1;
    if (a1) a.insert(a.begin(), 1);
    if (b1) b.push_back(1);
    auto batch = broadcast_shapes(std::vector<int64_t>(a.begin(), a.end() - 2),
                                  std::vector<int64_t>(b.begin(), b.end() - 2));
    if (!batch) return;
    std::vector<int64_t> s = *batch;
    if (!a1) s.push_back(a[a.size() - 2]);
    if (!b1) s.push_back(b.back());
    set_shape(y, s);
  } else if (t == "Gemm") {
    if (!known(0) || !known(1)) return;
    int64_t m = op.attrs.get_int("transA", 0) ? ins[0].dim(1) : ins[0].dim(0);
    int64_t n = op.attrs.get_int("transB", 0) ? ins[1].dim(0) : ins[1].dim(1);
    set_shape(y, {m, n});
  } else if (t == "Gather") {
    if (!known(0) || !known(1)) return;
    int64_t a = normalize_axis(op.attrs.get_int("axis", 0), ins[0].rank());
    if (a < 0 || a >= ins[0].rank()) return;
    std::vector<int64_t> s(ins[0].shape.begin(), ins[0].shape.begin() + a);
    s.insert(s.end(), ins[1].shape.begin(), ins[1].shape.end());
    s.insert(s.end(), ins[0].shape.begin() + a + 1, ins[0].shape.end());
    set_shape(y, s);
  } else if (t == "Shape") {
    if (known(0)) set_shape(y, {static_cast<int64_t>(ins[0].rank())});
  } else if (t == "ConstantOfShape") {
    if (value(0)) set_shape(y, *value(0));
  } else if (t == "Flatten") {
    if (!known(0)) return;
    int64_t a = normalize_axis(op.attrs.get_int("axis", 1), ins[0].rank());
    int64_t outer = 1;
    for (int64_t i = 0; i < a && i < ins[0].rank(); ++i)
      outer = mul_saturating(outer, ins[0].shape[i]);
    set_shape(y, {outer, outer == 0 ? 0 : ins[0].elements() / outer});
  } else if (t.rfind("Reduce", 0) == 0 || t == "ArgMax" || t == "ArgMin") {
    if (!known(0)) return;
    auto axes = t == "ArgMax" || t == "ArgMin"
                    ? std::optional<std::vector<int64_t>>{{op.attrs.get_int("axis", 0)}}
                    : axes_of(op, v, 1);
    if (!axes) return;
    bool keep = op.attrs.get_int("keepdims", 1) != 0;
    std::vector<int64_t> s;
    for (int i = 0; i < ins[0].rank(); ++i) {
      bool reduced = axes->empty() || std::count_if(axes->begin(), axes->end(), [&](int64_t a) {
                                        return normalize_axis(a, ins[0].rank()) == i;
                                      }) > 0;
      if (!reduced)
        s.push_back(ins[0].shape[i]);
      else if (keep)
        s.push_back(1);
    }
    set_shape(y, s);
  } else if (t == "Split") {
    if (!known(0)) return;
    int64_t a = normalize_axis(op.attrs.get_int("axis", 0), ins[0].rank());
    if (a < 0 || a >= ins[0].rank()) return;
    std::vector<int64_t> parts;
    if (ins.size() > 1 && ins[1].present) {
      if (!value(1)) return;
      parts = *value(1);
    } else {
      parts = op.attrs.get_ints("split");
    }
    int64_t n = static_cast<int64_t>(op.outputs.size());
    if (parts.empty()) parts.assign(n, ins[0].shape[a] / n);
    if (static_cast<int64_t>(parts.size()) != n) return;
    for (int64_t i = 0; i < n; ++i) {
      std::vector<int64_t> s = ins[0].shape;
      s[a] = parts[i];
      if (!op.outputs[i].known) set_shape(op.outputs[i], s);
    }
  } else if (t == "Range") {
    StaticValue r = evaluate_static(op, v)[0];
    if (r) set_shape(y, {static_cast<int64_t>(r->size())});
  }
}

}  // namespace placeto
