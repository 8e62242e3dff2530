// Timing one op of an imported model on the local device with LibTorch: the measurements
// behind `placeto profile` (docs/COST_MODEL.md "Measured costs").
//
// The op is run as the LibTorch kernel that a framework would launch for it, on random
// tensors of the op's shapes (sim/onnx/op_costs.h OpSpec): Conv as a convolution with the
// weight's shape, strides, padding, dilations and groups; MatMul/Gemm as matrix products;
// LSTM/GRU/RNN as the fused recurrent kernels; element-wise ops, reductions, softmax, pooling
// and normalisation as their ATen functions; data movement (Concat, Slice, Transpose, Gather,
// Pad, Expand, Split, Cast, ...) as the copy it makes.  Op types without a kernel of their own
// here run a copy of their output's size and say so (`OpTiming::kernel` starts "generic").
// This header does not include torch.  Not thread-safe: set the torch thread count first.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/onnx/op_costs.h"

namespace placeto {

struct TimingOptions {
  std::string device = "cpu";  // "cpu" or "cuda:K"
  int warmup = 2;              // untimed runs first
  int repeats = 7;             // timed samples; the median is reported
  // A sample runs the kernel as many times as it takes to last about this long (short ops
  // are timed in batches), and reports the time per run.
  double min_sample_us = 300;
  bool backward = false;  // also time the gradient (what `<op>/grad` does)
  int threads = 1;        // intra-op threads on the CPU (set_timing_threads)
};

struct OpTiming {
  double forward_us = 0;
  double backward_us = -1;         // < 0: not measured
  double update_us = -1;           // SGD with momentum on the op's parameters; < 0: none
  std::string kernel;              // what ran, e.g. "conv2d", "generic copy (Resize)"
  bool ran = false;                // false when shapes are unknown: nothing was timed
  std::vector<int64_t> out_shape;  // the shape of the kernel's first output
};

// Times `op`; `param_bytes` (4-byte parameters) sizes the update.  Throws InputError for an
// unusable device (CUDA without a CUDA build of LibTorch or without a GPU).
OpTiming time_op(const OpSpec& op, int64_t param_bytes, const TimingOptions& options);

// Sets LibTorch's intra-op thread count for the timings, flushes denormal floats to zero and
// keeps freed tensors in the heap (common/malloc_tuning.h); all process-wide.
void set_timing_threads(int threads);

// Checks `device` ("cpu", "cuda:K") before any work; InputError naming it otherwise.
void check_timing_device(const std::string& device);

}  // namespace placeto
