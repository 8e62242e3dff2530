#include "improve/move_scorer.h"

#include <algorithm>
#include <atomic>
#include <cmath>

#include "common/error.h"
#include "common/rng.h"

namespace placeto {

MoveScorer::MoveScorer(ScorerShape shape) : shape_(shape) {
  PLACETO_CHECK(shape.inputs > 0 && shape.hidden1 > 0 && shape.hidden2 > 0);
  params_.assign(b3() + 1, 0.0f);
  mean_.assign(shape.inputs, 0.0f);
  scale_.assign(shape.inputs, 1.0f);
}

void MoveScorer::init(uint64_t seed) {
  Rng rng(seed);
  auto normal = [&] {  // Box-Muller
    const double u = 1.0 - rng.uniform01(), w = rng.uniform01();
    return std::sqrt(-2.0 * std::log(u)) * std::cos(6.283185307179586 * w);
  };
  auto he = [&](size_t at, int fan_out, int fan_in) {
    const double sd = std::sqrt(2.0 / fan_in);
    for (size_t i = 0; i < static_cast<size_t>(fan_out) * fan_in; ++i)
      params_[at + i] = static_cast<float>(normal() * sd);
  };
  std::fill(params_.begin(), params_.end(), 0.0f);
  he(w1(), shape_.hidden1, shape_.inputs);
  he(w2(), shape_.hidden2, shape_.hidden1);
  he(w3(), 1, shape_.hidden2);
}

void MoveScorer::fit_standardization(const std::vector<float>& rows, size_t num_rows) {
  const int f = shape_.inputs;
  std::vector<double> sum(f, 0), sq(f, 0);
  for (size_t i = 0; i < num_rows; ++i)
    for (int k = 0; k < f; ++k) {
      const double x = rows[i * f + k];
      sum[k] += x;
      sq[k] += x * x;
    }
  for (int k = 0; k < f; ++k) {
    const double m = num_rows ? sum[k] / num_rows : 0;
    const double var = num_rows ? std::max(0.0, sq[k] / num_rows - m * m) : 0;
    mean_[k] = static_cast<float>(m);
    scale_[k] = var > 1e-12 ? static_cast<float>(1.0 / std::sqrt(var)) : 1.0f;
  }
}

namespace {

// Blocks of 8 and 16 floats: in the AVX2 build of the kernels below a block of 8 is one
// register (two in the baseline's), in the AVX-512 build a block of 16 is one.  Each lane adds
// the same terms in the same order whatever the block, so every build gives the same bits.
typedef float V8 __attribute__((vector_size(32)));
typedef float V16 __attribute__((vector_size(64)));

// Unaligned blocks, which may alias the float arrays they are read from and written to.
template <typename V>
struct Unaligned;
template <>
struct Unaligned<V8> {
  typedef float type __attribute__((vector_size(32), aligned(4), may_alias));
};
template <>
struct Unaligned<V16> {
  typedef float type __attribute__((vector_size(64), aligned(4), may_alias));
};

// The scorer's layers for R rows from row i0, each hidden unit a sum of scaled weight rows in
// input order (input-major weights), so every build adds in the same order and gives the same
// bits (-ffp-contract=off for this file keeps multiply and add apart: the baseline has no FMA).
// H1 and H2 known at compile time keep the rows' hidden layers in registers, in blocks of V
// (L floats each); R rows at once read each weight block once for all of them.  A hidden unit
// that is zero in every one of the R rows is skipped; where it is zero in some, adding 0 x w
// leaves the sum as skipping would, but perhaps for the sign of a zero, which the ReLU maps to
// +0: the bits are those of one row at a time.
template <int H1, int H2, typename V, int L, int R>
inline __attribute__((always_inline)) void mlp_block(size_t i0, const float* x, size_t stride,
                                                     int f, const float* mean, const float* scale,
                                                     const float* w1t, const float* B1,
                                                     const float* w2t, const float* B2,
                                                     const float* W3, float B3, float* xn_all,
                                                     float* h1_all, float* h2_all, float* scores) {
  static_assert(sizeof(V) == L * sizeof(float), "a block is L floats");
  static_assert(H1 % L == 0 && H2 % L == 0, "widths in whole blocks");
  // Loads and stores through the unaligned type (a macro: a function returning V would
  // change the ABI of the baseline build).
  typedef typename Unaligned<V>::type VU;
#define PLACETO_LOAD(p) (*reinterpret_cast<const VU*>(p))
#define PLACETO_STORE(p, v) (*reinterpret_cast<VU*>(p) = (v))
  for (int r = 0; r < R; ++r) {
    float* xn = xn_all + (i0 + r) * f;
    const float* xr = x + (i0 + r) * stride;
    for (int k = 0; k < f; ++k) xn[k] = (xr[k] - mean[k]) * scale[k];
  }
  V a1[R][H1 / L];
  for (int r = 0; r < R; ++r)
    for (int b = 0; b < H1 / L; ++b) a1[r][b] = PLACETO_LOAD(B1 + L * b);
  for (int k = 0; k < f; ++k) {
    const float* w = w1t + static_cast<size_t>(k) * H1;
    for (int b = 0; b < H1 / L; ++b) {
      const V wb = PLACETO_LOAD(w + L * b);
      for (int r = 0; r < R; ++r) a1[r][b] += xn_all[(i0 + r) * f + k] * wb;
    }
  }
  const V zero = {};
  for (int r = 0; r < R; ++r) {
    float* h1 = h1_all + (i0 + r) * H1;
    for (int b = 0; b < H1 / L; ++b) {
      a1[r][b] = a1[r][b] > zero ? a1[r][b] : zero;
      PLACETO_STORE(h1 + L * b, a1[r][b]);
    }
  }
  V a2[R][H2 / L];
  for (int r = 0; r < R; ++r)
    for (int b = 0; b < H2 / L; ++b) a2[r][b] = PLACETO_LOAD(B2 + L * b);
  for (int k = 0; k < H1; ++k) {
    float ak[R];
    bool any = false;
    for (int r = 0; r < R; ++r) {
      ak[r] = h1_all[(i0 + r) * H1 + k];
      any |= ak[r] != 0;
    }
    if (!any) continue;
    const float* w = w2t + static_cast<size_t>(k) * H2;
    for (int b = 0; b < H2 / L; ++b) {
      const V wb = PLACETO_LOAD(w + L * b);
      for (int r = 0; r < R; ++r) a2[r][b] += ak[r] * wb;
    }
  }
  for (int r = 0; r < R; ++r) {
    float* h2 = h2_all + (i0 + r) * H2;
    for (int b = 0; b < H2 / L; ++b) {
      a2[r][b] = a2[r][b] > zero ? a2[r][b] : zero;
      PLACETO_STORE(h2 + L * b, a2[r][b]);
    }
    float z = B3;
    for (int j = 0; j < H2; ++j) z += W3[j] * h2[j];
    scores[i0 + r] = z;
  }
#undef PLACETO_LOAD
#undef PLACETO_STORE
}

// All rows: blocks of R, then the rest one at a time.
template <int H1, int H2, typename V, int L, int R>
inline __attribute__((always_inline)) void mlp_rows_fixed(
    const float* x, size_t rows, size_t stride, int f, const float* mean, const float* scale,
    const float* w1t, const float* B1, const float* w2t, const float* B2, const float* W3, float B3,
    float* xn_all, float* h1_all, float* h2_all, float* scores) {
  size_t i = 0;
  for (; i + R <= rows; i += R)
    mlp_block<H1, H2, V, L, R>(i, x, stride, f, mean, scale, w1t, B1, w2t, B2, W3, B3, xn_all,
                               h1_all, h2_all, scores);
  for (; i < rows; ++i)
    mlp_block<H1, H2, V, L, 1>(i, x, stride, f, mean, scale, w1t, B1, w2t, B2, W3, B3, xn_all,
                               h1_all, h2_all, scores);
}

// The two shipped widths, each built for the baseline and (on x86) for AVX2 and for AVX-512
// (AVX512F), the widest the CPU has chosen (checked once, __builtin_cpu_supports; no ifunc, so
// this builds wherever GCC or clang does).  AVX-512 takes 4 rows at a time (32 registers hold
// their 64-wide hidden layers); AVX2 one, which was as fast as 2 or 4 (tests/bench/
// improve_bench.cc, docs/PERFORMANCE.md).  Tests may force a narrower build
// (MoveScorer::force_kernel_for_testing).
#define PLACETO_MLP_ARGS                                                                     \
  const float *x, size_t rows, size_t stride, int f, const float *mean, const float *scale,  \
      const float *w1t, const float *B1, const float *w2t, const float *B2, const float *W3, \
      float B3, float *xn_all, float *h1_all, float *h2_all, float *scores
#define PLACETO_MLP_PASS \
  x, rows, stride, f, mean, scale, w1t, B1, w2t, B2, W3, B3, xn_all, h1_all, h2_all, scores
#if defined(__x86_64__) || defined(__i386__)
#define PLACETO_SCORER_X86 1
__attribute__((target("avx2"))) void mlp_rows_64_32_avx2(PLACETO_MLP_ARGS) {
  mlp_rows_fixed<64, 32, V8, 8, 1>(PLACETO_MLP_PASS);
}
__attribute__((target("avx2"))) void mlp_rows_32_16_avx2(PLACETO_MLP_ARGS) {
  mlp_rows_fixed<32, 16, V8, 8, 1>(PLACETO_MLP_PASS);
}
__attribute__((target("avx512f"))) void mlp_rows_64_32_avx512(PLACETO_MLP_ARGS) {
  mlp_rows_fixed<64, 32, V16, 16, 4>(PLACETO_MLP_PASS);
}
__attribute__((target("avx512f"))) void mlp_rows_32_16_avx512(PLACETO_MLP_ARGS) {
  mlp_rows_fixed<32, 16, V16, 16, 4>(PLACETO_MLP_PASS);
}
#endif
void mlp_rows_64_32_base(PLACETO_MLP_ARGS) { mlp_rows_fixed<64, 32, V8, 8, 1>(PLACETO_MLP_PASS); }
void mlp_rows_32_16_base(PLACETO_MLP_ARGS) { mlp_rows_fixed<32, 16, V8, 8, 1>(PLACETO_MLP_PASS); }

// The widest kernel this CPU runs.
ScorerKernel widest_kernel() {
#ifdef PLACETO_SCORER_X86
  static const ScorerKernel widest = __builtin_cpu_supports("avx512f") ? ScorerKernel::kAvx512
                                     : __builtin_cpu_supports("avx2")  ? ScorerKernel::kAvx2
                                                                       : ScorerKernel::kBaseline;
  return widest;
#else
  return ScorerKernel::kBaseline;
#endif
}

// What a test asked for (kBest: no request).
std::atomic<ScorerKernel> g_forced{ScorerKernel::kBest};

ScorerKernel kernel_in_use() {
  const ScorerKernel widest = widest_kernel();
  const ScorerKernel forced = g_forced.load(std::memory_order_relaxed);
  return forced != ScorerKernel::kBest && forced < widest ? forced : widest;
}

// Any other widths: the same sums, the hidden layers in memory.
void mlp_rows(const float* x, size_t rows, size_t stride, int f, int h1, int h2, const float* mean,
              const float* scale, const float* w1t, const float* B1, const float* w2t,
              const float* B2, const float* W3, float B3, float* xn_all, float* h1_all,
              float* h2_all, float* scores) {
#ifdef PLACETO_SCORER_X86
  switch (kernel_in_use()) {
    case ScorerKernel::kAvx512:
      if (h1 == 64 && h2 == 32) return mlp_rows_64_32_avx512(PLACETO_MLP_PASS);
      if (h1 == 32 && h2 == 16) return mlp_rows_32_16_avx512(PLACETO_MLP_PASS);
      break;
    case ScorerKernel::kAvx2:
      if (h1 == 64 && h2 == 32) return mlp_rows_64_32_avx2(PLACETO_MLP_PASS);
      if (h1 == 32 && h2 == 16) return mlp_rows_32_16_avx2(PLACETO_MLP_PASS);
      break;
    case ScorerKernel::kBaseline:
    case ScorerKernel::kBest:
      break;
  }
#endif
  if (h1 == 64 && h2 == 32) return mlp_rows_64_32_base(PLACETO_MLP_PASS);
  if (h1 == 32 && h2 == 16) return mlp_rows_32_16_base(PLACETO_MLP_PASS);
  for (size_t i = 0; i < rows; ++i) {
    float* xn = xn_all + i * f;
    for (int k = 0; k < f; ++k) xn[k] = (x[i * stride + k] - mean[k]) * scale[k];
    float* a1 = h1_all + i * h1;
    std::copy(B1, B1 + h1, a1);
    for (int k = 0; k < f; ++k) {
      const float xk = xn[k];
      const float* w = w1t + static_cast<size_t>(k) * h1;
      for (int j = 0; j < h1; ++j) a1[j] += xk * w[j];
    }
    for (int j = 0; j < h1; ++j) a1[j] = a1[j] > 0 ? a1[j] : 0.0f;
    float* a2 = h2_all + i * h2;
    std::copy(B2, B2 + h2, a2);
    for (int k = 0; k < h1; ++k) {
      const float ak = a1[k];
      if (ak == 0) continue;
      const float* w = w2t + static_cast<size_t>(k) * h2;
      for (int j = 0; j < h2; ++j) a2[j] += ak * w[j];
    }
    float z = B3;
    for (int j = 0; j < h2; ++j) {
      a2[j] = a2[j] > 0 ? a2[j] : 0.0f;
      z += W3[j] * a2[j];
    }
    scores[i] = z;
  }
}

}  // namespace

ScorerKernel MoveScorer::force_kernel_for_testing(ScorerKernel kernel) {
  g_forced.store(kernel, std::memory_order_relaxed);
  return kernel_in_use();
}

void MoveScorer::forward(const float* x, size_t rows, float* scores, int row_stride) {
  const int f = shape_.inputs, h1 = shape_.hidden1, h2 = shape_.hidden2;
  const size_t stride = row_stride > 0 ? static_cast<size_t>(row_stride) : static_cast<size_t>(f);
  PLACETO_CHECK(stride >= static_cast<size_t>(f));
  xn_.resize(rows * f);
  h1_.resize(rows * h1);
  h2_.resize(rows * h2);
  w1t_.resize(static_cast<size_t>(f) * h1);
  for (int j = 0; j < h1; ++j)
    for (int k = 0; k < f; ++k) w1t_[static_cast<size_t>(k) * h1 + j] = params_[w1() + j * f + k];
  w2t_.resize(static_cast<size_t>(h1) * h2);
  for (int j = 0; j < h2; ++j)
    for (int k = 0; k < h1; ++k) w2t_[static_cast<size_t>(k) * h2 + j] = params_[w2() + j * h1 + k];
  mlp_rows(x, rows, stride, f, h1, h2, mean_.data(), scale_.data(), w1t_.data(),
           params_.data() + b1(), w2t_.data(), params_.data() + b2(), params_.data() + w3(),
           params_[b3()], xn_.data(), h1_.data(), h2_.data(), scores);
}

void MoveScorer::score(const float* x, size_t rows, float* scores, int row_stride) {
  forward(x, rows, scores, row_stride);
}

double MoveScorer::listwise_loss(const float* x, size_t rows, const float* target, float* grad,
                                 double weight, float* scores, double temperature, int row_stride) {
  if (rows == 0) return 0;
  const int f = shape_.inputs, h1 = shape_.hidden1, h2 = shape_.hidden2;
  dz_.resize(rows);
  forward(x, rows, dz_.data(), row_stride);
  if (scores) std::copy(dz_.begin(), dz_.begin() + rows, scores);
  PLACETO_CHECK(temperature > 0);
  const double inv_t = 1.0 / temperature;
  double zmax = -INFINITY;
  for (size_t i = 0; i < rows; ++i) zmax = std::max(zmax, inv_t * dz_[i]);
  double total = 0;
  for (size_t i = 0; i < rows; ++i) total += std::exp(inv_t * dz_[i] - zmax);
  const double log_total = std::log(total) + zmax;
  double loss = 0;
  for (size_t i = 0; i < rows; ++i) {
    const double log_p = inv_t * dz_[i] - log_total;
    if (target[i] > 0) loss -= target[i] * log_p;
    // d loss / d score_i
    dz_[i] = static_cast<float>(weight * inv_t * (std::exp(log_p) - target[i]));
  }
  const float* W2 = params_.data() + w2();
  const float* W3 = params_.data() + w3();
  float* gW1 = grad + w1();
  float* gB1 = grad + b1();
  float* gW2 = grad + w2();
  float* gB2 = grad + b2();
  float* gW3 = grad + w3();
  float& gB3 = grad[b3()];
  dh1_.resize(h1);
  dh2_.resize(h2);
  for (size_t i = 0; i < rows; ++i) {
    const float dz = dz_[i];
    if (dz == 0) continue;
    const float* a1 = h1_.data() + i * h1;
    const float* a2 = h2_.data() + i * h2;
    const float* xn = xn_.data() + i * f;
    gB3 += dz;
    for (int j = 0; j < h2; ++j) {
      gW3[j] += dz * a2[j];
      dh2_[j] = a2[j] > 0 ? dz * W3[j] : 0.0f;
    }
    std::fill(dh1_.begin(), dh1_.end(), 0.0f);
    for (int j = 0; j < h2; ++j) {
      const float d = dh2_[j];
      if (d == 0) continue;
      gB2[j] += d;
      float* gw = gW2 + static_cast<size_t>(j) * h1;
      const float* w = W2 + static_cast<size_t>(j) * h1;
      for (int k = 0; k < h1; ++k) {
        gw[k] += d * a1[k];
        dh1_[k] += d * w[k];
      }
    }
    for (int j = 0; j < h1; ++j) {
      if (a1[j] <= 0) continue;
      const float d = dh1_[j];
      gB1[j] += d;
      float* gw = gW1 + static_cast<size_t>(j) * f;
      for (int k = 0; k < f; ++k) gw[k] += d * xn[k];
    }
  }
  return loss;
}

void MoveScorer::to_checkpoint(CheckpointData* data) const {
  const int f = shape_.inputs, h1 = shape_.hidden1, h2 = shape_.hidden2;
  auto slice = [&](size_t at, size_t n) {
    return std::vector<float>(params_.begin() + at, params_.begin() + at + n);
  };
  auto& m = data->model;
  m["scorer/w1"] = NamedArray::from_floats({h1, f}, slice(w1(), static_cast<size_t>(h1) * f));
  m["scorer/b1"] = NamedArray::from_floats({h1}, slice(b1(), h1));
  m["scorer/w2"] = NamedArray::from_floats({h2, h1}, slice(w2(), static_cast<size_t>(h2) * h1));
  m["scorer/b2"] = NamedArray::from_floats({h2}, slice(b2(), h2));
  m["scorer/w3"] = NamedArray::from_floats({1, h2}, slice(w3(), h2));
  m["scorer/b3"] = NamedArray::from_floats({1}, slice(b3(), 1));
  m["scorer/feature_mean"] = NamedArray::from_floats({f}, mean_);
  m["scorer/feature_scale"] = NamedArray::from_floats({f}, scale_);
}

MoveScorer MoveScorer::from_checkpoint(const CheckpointData& data, const std::string& source) {
  auto get = [&](const std::string& name) -> const NamedArray& {
    auto it = data.model.find(name);
    if (it == data.model.end())
      throw InputError(source + ": not a learned-search checkpoint (no /model/" + name + ")");
    return it->second;
  };
  const NamedArray& w1 = get("scorer/w1");
  const NamedArray& w2 = get("scorer/w2");
  if (w1.shape.size() != 2 || w2.shape.size() != 2 || w2.shape[1] != w1.shape[0])
    throw InputError(source + ": /model/scorer/w1 " + shape_string(w1.shape) + " and w2 " +
                     shape_string(w2.shape) + " do not chain");
  ScorerShape shape;
  shape.inputs = static_cast<int>(w1.shape[1]);
  shape.hidden1 = static_cast<int>(w1.shape[0]);
  shape.hidden2 = static_cast<int>(w2.shape[0]);
  if (shape.inputs <= 0 || shape.hidden1 <= 0 || shape.hidden2 <= 0)
    throw InputError(source + ": /model/scorer/w1 has an empty shape " + shape_string(w1.shape));
  MoveScorer s(shape);
  auto put = [&](const std::string& name, std::vector<int64_t> want, float* into) {
    const NamedArray& a = get(name);
    if (a.shape != want)
      throw InputError(source + ": /model/" + name + " has shape " + shape_string(a.shape) +
                       ", expected " + shape_string(want));
    const std::vector<float> v = a.to_floats();
    std::copy(v.begin(), v.end(), into);
  };
  const int f = shape.inputs, h1 = shape.hidden1, h2 = shape.hidden2;
  put("scorer/w1", {h1, f}, s.params_.data() + s.w1());
  put("scorer/b1", {h1}, s.params_.data() + s.b1());
  put("scorer/w2", {h2, h1}, s.params_.data() + s.w2());
  put("scorer/b2", {h2}, s.params_.data() + s.b2());
  put("scorer/w3", {1, h2}, s.params_.data() + s.w3());
  put("scorer/b3", {1}, s.params_.data() + s.b3());
  put("scorer/feature_mean", {f}, s.mean_.data());
  put("scorer/feature_scale", {f}, s.scale_.data());
  for (float v : s.params_)
    if (!std::isfinite(v)) throw InputError(source + ": /model/scorer holds a non-finite weight");
  return s;
}

}  // namespace placeto
