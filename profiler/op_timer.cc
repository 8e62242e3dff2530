#include "profiler/op_timer.h"

#include <torch/cuda.h>
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <map>

#include "common/error.h"
#include "common/malloc_tuning.h"

namespace placeto {
namespace {

using Tensors = std::vector<at::Tensor>;
using Kernel = std::function<Tensors(const Tensors&)>;

std::vector<int64_t> shape_of(const TensorInfo& t) { return t.shape; }

at::ScalarType dtype_of(const TensorInfo& t) {
  switch (t.elem_bytes) {
    case 8:
      return at::kLong;
    case 2:
      return at::kHalf;
    case 1:
      return at::kBool;
    default:
      return at::kFloat;
  }
}

bool all_known(const OpSpec& op) {
  for (const TensorInfo& t : op.inputs)
    if (t.present && !t.known) return false;
  for (const TensorInfo& t : op.outputs)
    if (t.present && !t.known) return false;
  return !op.outputs.empty();
}

// The spatial settings of a convolution or pool, taken from the attributes and checked
// against the shapes (padding is derived from input and output sizes where the attribute is
// absent, e.g. auto_pad).
struct Window {
  std::vector<int64_t> kernel, stride, pad, dilation;
};

Window window_of(const OpSpec& op, const at::Tensor& x, const std::vector<int64_t>& kernel) {
  const int n = static_cast<int>(kernel.size());
  Window w;
  w.kernel = kernel;
  w.stride = op.attrs.get_ints("strides");
  w.dilation = op.attrs.get_ints("dilations");
  std::vector<int64_t> pads = op.attrs.get_ints("pads");
  if (static_cast<int>(w.stride.size()) != n) w.stride.assign(n, 1);
  if (static_cast<int>(w.dilation.size()) != n) w.dilation.assign(n, 1);
  const TensorInfo& y = op.outputs[0];
  for (int i = 0; i < n; ++i) {
    int64_t p = 0;
    if (static_cast<int>(pads.size()) == 2 * n) {
      p = std::max(pads[i], pads[i + n]);
    } else {
      int64_t in = x.size(2 + i), out = y.dim(2 + i);
      int64_t total = (out - 1) * w.stride[i] + w.dilation[i] * (kernel[i] - 1) + 1 - in;
      p = std::max<int64_t>(0, (total + 1) / 2);
    }
    w.pad.push_back(p);
  }
  return w;
}

Tensors one(at::Tensor t) { return Tensors{std::move(t)}; }

at::Tensor conv(const OpSpec& op, const Tensors& in) {
  const at::Tensor& x = in[0];
  const at::Tensor& w = in[1];
  std::vector<int64_t> kernel(w.sizes().begin() + 2, w.sizes().end());
  Window win = window_of(op, x, kernel);
  at::Tensor bias = in.size() > 2 ? in[2] : at::Tensor();
  const bool transposed = op.op_type == "ConvTranspose";
  std::vector<int64_t> out_pad(kernel.size(), 0);
  return at::convolution(x, w, bias, win.stride, win.pad, win.dilation, transposed, out_pad,
                         op.attrs.get_int("group", 1));
}

at::Tensor pool(const OpSpec& op, const Tensors& in) {
  const at::Tensor& x = in[0];
  const int spatial = static_cast<int>(x.dim()) - 2;
  if (op.op_type.rfind("Global", 0) == 0) {
    std::vector<int64_t> dims;
    for (int i = 0; i < spatial; ++i) dims.push_back(2 + i);
    return op.op_type == "GlobalMaxPool" ? at::amax(x, dims, true) : at::mean(x, dims, true);
  }
  std::vector<int64_t> kernel = op.attrs.get_ints("kernel_shape");
  if (static_cast<int>(kernel.size()) != spatial) kernel.assign(spatial, 1);
  Window win = window_of(op, x, kernel);
  for (int i = 0; i < spatial; ++i) win.pad[i] = std::min(win.pad[i], kernel[i] / 2);
  const bool ceil_mode = op.attrs.get_int("ceil_mode", 0) != 0;
  if (op.op_type == "MaxPool") {
    if (spatial == 1)
      return at::max_pool1d(x, win.kernel, win.stride, win.pad, win.dilation, ceil_mode);
    if (spatial == 3)
      return at::max_pool3d(x, win.kernel, win.stride, win.pad, win.dilation, ceil_mode);
    return at::max_pool2d(x, win.kernel, win.stride, win.pad, win.dilation, ceil_mode);
  }
  const bool count_pad = op.attrs.get_int("count_include_pad", 0) != 0;
  if (spatial == 1) return at::avg_pool1d(x, win.kernel, win.stride, win.pad, ceil_mode, count_pad);
  if (spatial == 3) return at::avg_pool3d(x, win.kernel, win.stride, win.pad, ceil_mode, count_pad);
  return at::avg_pool2d(x, win.kernel, win.stride, win.pad, ceil_mode, count_pad);
}

at::Tensor gemm(const OpSpec& op, const Tensors& in) {
  at::Tensor a = op.attrs.get_int("transA", 0) ? in[0].t() : in[0];
  at::Tensor b = op.attrs.get_int("transB", 0) ? in[1].t() : in[1];
  if (in.size() > 2 && in[2].defined()) return at::addmm(in[2], a, b);
  return at::mm(a, b);
}

at::Tensor normalization(const OpSpec& op, const Tensors& in) {
  const at::Tensor& x = in[0];
  const double eps = 1e-5;
  if (op.op_type == "BatchNormalization") {
    const bool training = op.attrs.get_int("training_mode", 0) != 0;
    return at::batch_norm(x, in[1], in[2], in[3], in[4], training, 0.1, eps, false);
  }
  if (op.op_type == "LayerNormalization") {
    int64_t axis = op.attrs.get_int("axis", -1);
    if (axis < 0) axis += x.dim();
    std::vector<int64_t> norm(x.sizes().begin() + axis, x.sizes().end());
    at::Tensor w = in.size() > 1 ? in[1] : at::Tensor();
    at::Tensor b = in.size() > 2 ? in[2] : at::Tensor();
    return at::layer_norm(x, norm, w, b, eps, false);
  }
  if (op.op_type == "GroupNormalization")
    return at::group_norm(x, op.attrs.get_int("num_groups", 1), at::Tensor(), at::Tensor(), eps,
                          false);
  // Instance norm, LRN, LpNorm, MVN: a per-channel normalisation of the same traffic.
  return at::instance_norm(x, at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor(), true, 0.1,
                           eps, false);
}

std::vector<int64_t> reduced_axes(const OpSpec& op, const at::Tensor& x) {
  std::vector<int64_t> axes = op.attrs.get_ints("axes");
  if (axes.empty()) {
    // ReduceSum-13 takes the axes as an input: compare the shapes (keepdims keeps a 1).
    const TensorInfo& y = op.outputs[0];
    if (y.rank() == x.dim())
      for (int64_t d = 0; d < x.dim(); ++d)
        if (y.shape[d] != x.size(d)) axes.push_back(d);
    if (axes.empty())
      for (int64_t d = 0; d < x.dim(); ++d) axes.push_back(d);
  }
  for (int64_t& a : axes)
    if (a < 0) a += x.dim();
  return axes;
}

at::Tensor reduce(const OpSpec& op, const Tensors& in) {
  const at::Tensor& x = in[0];
  const bool keep = op.attrs.get_int("keepdims", 1) != 0;
  const std::string& t = op.op_type;
  if (t == "ArgMax" || t == "ArgMin") {
    int64_t axis = op.attrs.get_int("axis", 0);
    return t == "ArgMax" ? at::argmax(x, axis, keep) : at::argmin(x, axis, keep);
  }
  if (t == "CumSum") return at::cumsum(x, 0);
  std::vector<int64_t> axes = reduced_axes(op, x);
  if (t == "ReduceMax") return at::amax(x, axes, keep);
  if (t == "ReduceMin") return at::amin(x, axes, keep);
  if (t == "ReduceSumSquare" || t == "ReduceL2") return at::sum(x * x, axes, keep);
  if (t == "ReduceLogSumExp") return at::logsumexp(x, axes, keep);
  if (t == "ReduceMean") return at::mean(x, axes, keep);
  return at::sum(x, axes, keep);
}

// LibTorch's recurrent output [seq, batch, dirs * H] viewed as ONNX's [seq, dirs, batch, H]
// (a view, no copy: what an exporter's following Transpose/Reshape would see).
at::Tensor onnx_layout(const at::Tensor& y, int64_t dirs) {
  return y.view({y.size(0), y.size(1), dirs, y.size(2) / dirs}).transpose(1, 2);
}

Tensors recurrent(const OpSpec& op, const Tensors& in) {
  // ONNX: X [seq, batch, input], W [dirs, g*H, input], R [dirs, g*H, H], B [dirs, 2*g*H].
  const at::Tensor& x = in[0];
  const at::Tensor& w = in[1];
  const at::Tensor& r = in[2];
  const int64_t dirs = w.size(0), hidden = r.size(2), batch = x.size(1);
  const bool has_bias = in.size() > 3 && in[3].defined();
  const int64_t gates = w.size(1) / hidden;
  std::vector<at::Tensor> params;
  for (int64_t d = 0; d < dirs; ++d) {
    params.push_back(w[d]);
    params.push_back(r[d]);
    if (has_bias) {
      params.push_back(in[3][d].narrow(0, 0, gates * hidden));
      params.push_back(in[3][d].narrow(0, gates * hidden, gates * hidden));
    }
  }
  at::Tensor h0 = at::zeros({dirs, batch, hidden}, x.options());
  const bool bidirectional = dirs == 2;
  if (op.op_type == "LSTM") {
    at::Tensor c0 = at::zeros({dirs, batch, hidden}, x.options());
    auto out = at::lstm(x, {h0, c0}, params, has_bias, 1, 0.0, false, bidirectional, false);
    return {onnx_layout(std::get<0>(out), dirs), std::get<1>(out), std::get<2>(out)};
  }
  if (op.op_type == "GRU") {
    auto out = at::gru(x, h0, params, has_bias, 1, 0.0, false, bidirectional, false);
    return {onnx_layout(std::get<0>(out), dirs), std::get<1>(out)};
  }
  auto out = at::rnn_tanh(x, h0, params, has_bias, 1, 0.0, false, bidirectional, false);
  return {onnx_layout(std::get<0>(out), dirs), std::get<1>(out)};
}

// A copy producing the output of `op` from input 0 (Slice: the selected part; Pad: grown).
at::Tensor shaped_copy(const at::Tensor& x, const std::vector<int64_t>& out) {
  if (x.dim() == static_cast<int64_t>(out.size())) {
    at::Tensor v = x;
    bool fits = true;
    for (size_t d = 0; d < out.size(); ++d) {
      if (out[d] <= v.size(d))
        v = v.narrow(static_cast<int64_t>(d), 0, out[d]);
      else
        fits = false;
    }
    if (fits) return v.contiguous();
    std::vector<int64_t> pad;
    for (size_t d = out.size(); d-- > 0;) {
      pad.push_back(0);
      pad.push_back(std::max<int64_t>(0, out[d] - x.size(static_cast<int64_t>(d))));
    }
    return at::constant_pad_nd(x, pad, 0).narrow(0, 0, out[0]).contiguous();
  }
  at::Tensor y = at::empty(out, x.options());
  const int64_t n = std::min(y.numel(), x.numel());
  y.view(-1).narrow(0, 0, n).copy_(x.reshape(-1).narrow(0, 0, n));
  return y;
}

Tensors data_movement(const OpSpec& op, const Tensors& in) {
  const std::string& t = op.op_type;
  const at::Tensor& x = in[0];
  const std::vector<int64_t> out = shape_of(op.outputs[0]);
  auto axis_of = [&](int64_t rank) {
    int64_t a = op.attrs.get_int("axis", 0);
    return a < 0 ? a + rank : a;
  };
  if (t == "Concat") {
    Tensors parts;
    for (const at::Tensor& p : in)
      if (p.defined()) parts.push_back(p);
    return one(at::cat(parts, axis_of(x.dim())));
  }
  if (t == "Transpose") {
    std::vector<int64_t> perm = op.attrs.get_ints("perm");
    if (static_cast<int64_t>(perm.size()) != x.dim())
      for (int64_t d = x.dim(); d-- > 0;) perm.push_back(d);
    return one(x.permute(perm).contiguous());
  }
  if (t == "Gather") {
    const int64_t axis = axis_of(x.dim());
    return one(at::index_select(x, axis, in[1].reshape(-1)).reshape(out));
  }
  if (t == "Expand") return one(x.expand(out).contiguous());
  if (t == "Cast" || t == "CastLike") return one(x.to(dtype_of(op.outputs[0])));
  if (t == "Split") {
    const int64_t axis = axis_of(x.dim());
    Tensors parts;
    int64_t start = 0;
    for (const TensorInfo& o : op.outputs) {
      const int64_t len = o.dim(static_cast<int>(axis));
      parts.push_back(x.narrow(axis, start, std::min(len, x.size(axis) - start)).contiguous());
      start += len;
    }
    return parts;
  }
  // Slice, Pad, Tile, Resize, ...: the copy that writes the output.
  return one(shaped_copy(x, out));
}

const std::map<std::string, std::function<at::Tensor(const Tensors&)>>& elementwise_kernels() {
  using F = std::function<at::Tensor(const Tensors&)>;
  static const std::map<std::string, F> k = {
      {"Add", [](const Tensors& a) { return at::add(a[0], a[1]); }},
      {"Sub", [](const Tensors& a) { return at::sub(a[0], a[1]); }},
      {"Mul", [](const Tensors& a) { return at::mul(a[0], a[1]); }},
      {"Div", [](const Tensors& a) { return at::div(a[0], a[1]); }},
      {"Pow", [](const Tensors& a) { return at::pow(a[0], a[1]); }},
      {"Max", [](const Tensors& a) { return at::maximum(a[0], a[1]); }},
      {"Min", [](const Tensors& a) { return at::minimum(a[0], a[1]); }},
      {"Equal", [](const Tensors& a) { return at::eq(a[0], a[1]); }},
      {"Less", [](const Tensors& a) { return at::lt(a[0], a[1]); }},
      {"Greater", [](const Tensors& a) { return at::gt(a[0], a[1]); }},
      {"Where", [](const Tensors& a) { return at::where(a[0], a[1], a[2]); }},
      {"PRelu", [](const Tensors& a) { return at::prelu(a[0], a[1]); }},
      {"Relu", [](const Tensors& a) { return at::relu(a[0]); }},
      {"Sigmoid", [](const Tensors& a) { return at::sigmoid(a[0]); }},
      {"Tanh", [](const Tensors& a) { return at::tanh(a[0]); }},
      {"Exp", [](const Tensors& a) { return at::exp(a[0]); }},
      {"Log", [](const Tensors& a) { return at::log(a[0].abs() + 1); }},
      {"Sqrt", [](const Tensors& a) { return at::sqrt(a[0].abs()); }},
      {"Erf", [](const Tensors& a) { return at::erf(a[0]); }},
      {"Neg", [](const Tensors& a) { return at::neg(a[0]); }},
      {"Abs", [](const Tensors& a) { return at::abs(a[0]); }},
      {"Reciprocal", [](const Tensors& a) { return at::reciprocal(a[0]); }},
      {"Softplus", [](const Tensors& a) { return at::softplus(a[0]); }},
      {"Elu", [](const Tensors& a) { return at::elu(a[0]); }},
      {"Gelu", [](const Tensors& a) { return at::gelu(a[0]); }},
      {"LeakyRelu", [](const Tensors& a) { return at::leaky_relu(a[0], 0.01); }},
      {"HardSigmoid", [](const Tensors& a) { return at::hardsigmoid(a[0]); }},
      {"HardSwish", [](const Tensors& a) { return at::hardswish(a[0]); }},
      {"Clip", [](const Tensors& a) { return at::clamp(a[0], -1.0, 1.0); }},
      {"Floor", [](const Tensors& a) { return at::floor(a[0]); }},
      {"Ceil", [](const Tensors& a) { return at::ceil(a[0]); }},
      {"Not", [](const Tensors& a) { return at::logical_not(a[0]); }},
  };
  return k;
}

// The kernel for `op` and its name; `in` are the op's inputs (absent ones undefined).
std::pair<Kernel, std::string> kernel_for(const OpSpec& op) {
  const std::string cls = cost_class(op.op_type, op.domain);
  const std::string& t = op.op_type;
  if (cls == "conv") return {[op](const Tensors& in) { return one(conv(op, in)); }, "convolution"};
  if (cls == "gemm") return {[op](const Tensors& in) { return one(gemm(op, in)); }, "addmm"};
  if (cls == "matmul")
    return {[](const Tensors& in) { return one(at::matmul(in[0], in[1])); }, "matmul"};
  if (cls == "pool") return {[op](const Tensors& in) { return one(pool(op, in)); }, "pool"};
  if (cls == "norm")
    return {[op](const Tensors& in) { return one(normalization(op, in)); }, "normalization"};
  if (cls == "reduce") return {[op](const Tensors& in) { return one(reduce(op, in)); }, "reduce"};
  if (cls == "recurrent")
    return {[op](const Tensors& in) { return recurrent(op, in); }, "recurrent (" + t + ")"};
  if (cls == "softmax") {
    const int64_t axis = op.attrs.get_int("axis", -1);
    if (t == "LogSoftmax")
      return {[axis](const Tensors& in) { return one(at::log_softmax(in[0], axis)); },
              "log_softmax"};
    return {[axis](const Tensors& in) { return one(at::softmax(in[0], axis)); }, "softmax"};
  }
  if (cls == "elementwise") {
    auto it = elementwise_kernels().find(t);
    if (it != elementwise_kernels().end()) {
      auto f = it->second;
      return {[f](const Tensors& in) { return one(f(in)); }, "elementwise (" + t + ")"};
    }
  }
  if (cls == "data_movement")
    return {[op](const Tensors& in) { return data_movement(op, in); }, "copy (" + t + ")"};
  std::vector<int64_t> out = op.outputs[0].shape;
  return {[out](const Tensors& in) { return one(shaped_copy(in[0], out)); },
          "generic copy (" + t + ")"};
}

// Random inputs of the op's shapes; index inputs are valid indices into the data they index.
Tensors make_inputs(const OpSpec& op, const at::TensorOptions& base) {
  Tensors in;
  for (size_t i = 0; i < op.inputs.size(); ++i) {
    const TensorInfo& t = op.inputs[i];
    if (!t.present) {
      in.emplace_back();
      continue;
    }
    const at::ScalarType type = dtype_of(t);
    const at::TensorOptions o = base.dtype(type);
    if (type == at::kLong) {
      int64_t high = 10;
      if (op.op_type == "Gather" && i == 1 && !op.inputs.empty()) {
        int64_t axis = op.attrs.get_int("axis", 0);
        if (axis < 0) axis += op.inputs[0].rank();
        high = std::max<int64_t>(1, op.inputs[0].dim(static_cast<int>(axis)));
      }
      in.push_back(at::randint(0, high, t.shape, o));
    } else if (type == at::kBool) {
      in.push_back(at::rand(t.shape, base) > 0.5);
    } else {
      in.push_back(at::randn(t.shape, o));
    }
  }
  // Normalisation statistics must be positive.
  if (op.op_type == "BatchNormalization" && in.size() > 4) in[4] = in[4].abs() + 1;
  return in;
}

void sync(bool cuda) {
  if (cuda) torch::cuda::synchronize();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

double time_us(const std::function<void()>& f, const TimingOptions& o, bool cuda) {
  using Clock = std::chrono::steady_clock;
  for (int i = 0; i < o.warmup; ++i) f();
  sync(cuda);
  auto t0 = Clock::now();
  f();
  sync(cuda);
  const double once = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
  const int inner =
      static_cast<int>(std::clamp(std::ceil(o.min_sample_us / std::max(once, 0.05)), 1.0, 1000.0));
  std::vector<double> samples;
  for (int r = 0; r < std::max(1, o.repeats); ++r) {
    t0 = Clock::now();
    for (int i = 0; i < inner; ++i) f();
    sync(cuda);
    samples.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / inner);
  }
  return median(samples);
}

// Nothing differentiable (indices, comparisons): the gradient is the zeros written for the
// inputs.
double time_zero_grads(const Tensors& in, const TimingOptions& options, bool cuda) {
  return time_us(
      [&] {
        for (const at::Tensor& t : in)
          if (t.defined()) at::zeros_like(t);
      },
      options, cuda);
}

// The gradient of every floating-point input from a random output gradient.
double time_backward(const Kernel& kernel, Tensors in, const TimingOptions& options, bool cuda) {
  Tensors leaves;
  for (at::Tensor& t : in)
    if (t.defined() && t.is_floating_point()) {
      t = t.detach().requires_grad_(true);
      leaves.push_back(t);
    }
  Tensors outs, grads;
  if (!leaves.empty())
    for (const at::Tensor& y : kernel(in))
      if (y.defined() && y.requires_grad()) {
        outs.push_back(y);
        grads.push_back(at::randn_like(y));
      }
  if (outs.empty()) return time_zero_grads(in, options, cuda);
  return time_us(
      [&] { torch::autograd::grad(outs, leaves, grads, /*retain_graph=*/true, false, true); },
      options, cuda);
}

}  // namespace

void set_timing_threads(int threads) {
  if (threads < 1) throw InputError("--threads must be >= 1, got " + std::to_string(threads));
  at::set_num_threads(threads);
  // Denormal floats are 10-100x slower on x86 and random gradients pushed through recurrent
  // kernels reach them: flushed, an op's time depends on the op, not on its data's magnitude.
  at::globalContext().setFlushDenormal(true);
  // Freed tensors stay in the heap: without it every output of a few MB is a fresh mmap whose
  // page faults would be timed as the op's (common/malloc_tuning.h).
  tune_malloc_for_tensors();
}

void check_timing_device(const std::string& device) {
  if (device == "cpu") return;
  if (device.rfind("cuda", 0) != 0)
    throw InputError("--device: unknown device '" + device + "' (use cpu or cuda:K)");
  if (!torch::cuda::is_available())
    throw InputError("--device " + device +
                     ": this LibTorch has no usable CUDA (no GPU, or a CPU-only build such as "
                     "Debian's libtorch-dev)");
  try {
    at::Device d(device);
    if (d.index() >= static_cast<int64_t>(torch::cuda::device_count()))
      throw InputError("--device " + device + ": only " +
                       std::to_string(torch::cuda::device_count()) + " CUDA devices");
  } catch (const c10::Error&) {
    throw InputError("--device: cannot parse '" + device + "' (use cpu or cuda:K)");
  }
}

OpTiming time_op(const OpSpec& op, int64_t param_bytes, const TimingOptions& options) {
  OpTiming timing;
  if (!all_known(op)) {
    timing.kernel = "not run (unknown shapes)";
    return timing;
  }
  const bool cuda = options.device != "cpu";
  const at::TensorOptions base = at::TensorOptions().device(at::Device(options.device));
  auto [kernel, name] = kernel_for(op);
  Tensors in = make_inputs(op, base);
  timing.kernel = name;
  try {
    at::NoGradGuard no_grad;
    const Tensors out = kernel(in);
    timing.out_shape = out.at(0).sizes().vec();
  } catch (const c10::Error&) {
    // Shapes or attributes the ATen kernel refuses: time the copy that writes the output.
    std::vector<int64_t> out = op.outputs[0].shape;
    kernel = [out](const Tensors& x) { return one(shaped_copy(x[0], out)); };
    timing.kernel = "generic copy (" + op.op_type + ": " + name + " refused the shapes)";
    timing.out_shape = out;
  }
  {
    at::NoGradGuard no_grad;
    timing.forward_us = time_us([&] { kernel(in); }, options, cuda);
  }
  timing.ran = true;
  if (options.backward) {
    try {
      timing.backward_us = time_backward(kernel, in, options, cuda);
    } catch (const c10::Error&) {
      timing.backward_us = time_zero_grads(in, options, cuda);
      timing.kernel += "; backward refused, timed as writing zero gradients";
    }
  }
  if (param_bytes > 0) {
    const int64_t n = std::max<int64_t>(1, param_bytes / 4);
    at::Tensor w = at::randn({n}, base), g = at::randn({n}, base), m = at::zeros({n}, base);
    at::NoGradGuard no_grad;
    timing.update_us = time_us(
        [&] {
          m.mul_(0.9).add_(g);
          w.add_(m, -0.01);
        },
        options, cuda);
  }
  return timing;
}

}  // namespace placeto
