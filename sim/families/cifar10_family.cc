// cifar10: CNNs stacked from ENAS-style convolutional cells (Pham et al. 2018, "micro" search
// space): each cell node picks two earlier nodes and an op for each, sums the two results,
// and the cell concatenates the nodes no other node reads.  Three stages of `layers` normal
// cells on 32x32, 16x16 and 8x8 maps, separated by reduction cells that halve the map and
// double the channels.  One normal and one reduction cell architecture per graph, as in ENAS.
#include <string>
#include <vector>

#include "sim/cost_model.h"
#include "sim/families/generators.h"
#include "sim/families/training_graph.h"

namespace placeto {
namespace {

enum CellOp { kConv3, kConv5, kSep3, kSep5, kAvgPool, kMaxPool, kIdentity, kNumCellOps };
const char* const kOpNames[] = {"conv3x3",    "conv5x5",    "sep3x3",  "sep5x5",
                                "avgpool3x3", "maxpool3x3", "identity"};

struct CellArch {
  // Node j (cell-local index j + 2) reads nodes in[j][0..1] through ops op[j][0..1].
  std::vector<int> in_a, in_b;
  std::vector<CellOp> op_a, op_b;
};

CellArch sample_cell(int nodes, FamilyRng& rng) {
  CellArch a;
  for (int j = 0; j < nodes; ++j) {
    a.in_a.push_back(rng.below(j + 2));
    a.op_a.push_back(static_cast<CellOp>(rng.below(kNumCellOps)));
    a.in_b.push_back(rng.below(j + 2));
    a.op_b.push_back(static_cast<CellOp>(rng.below(kNumCellOps)));
  }
  return a;
}

struct Tensor {
  int op;
  int64_t hw;  // spatial side
  int64_t c;   // channels
};

class CnnBuilder {
 public:
  CnnBuilder(const FamilySpec& spec, const std::string& name)
      : spec_(spec), b_(name, device_profile(spec.profile)), batch_(spec.batch) {}

  int64_t bytes(int64_t hw, int64_t c) const { return batch_ * hw * hw * c * 4; }
  int64_t bytes(const Tensor& t) const { return bytes(t.hw, t.c); }

  // relu-conv(k x k, stride)-batchnorm from `in` to `cout` channels.
  Tensor conv(const std::string& name, const std::string& type, const Tensor& in, int64_t cout,
              int k, int stride) {
    const int64_t hw = in.hw / stride;
    const double flops =
        conv2d_flops(batch_, hw, hw, in.c, cout, k, k) + 4.0 * batch_ * hw * hw * cout;
    const int64_t params = (in.c * cout * k * k + 2 * cout) * 4;
    const double moved = 2.0 * bytes(in) + 2.0 * bytes(hw, cout) + params;
    return {b_.add_op(name, type, flops, moved, bytes(hw, cout), {in.op}, params), hw, cout};
  }
  // Two rounds of relu-depthwise(k x k)-pointwise(1 x 1)-batchnorm, as in ENAS.
  Tensor sep_conv(const std::string& name, const Tensor& in, int k, int stride) {
    const int64_t hw = in.hw / stride;
    const int64_t c = in.c;
    const double per_round = conv2d_flops(batch_, hw, hw, c, c, k, k, c) +
                             conv2d_flops(batch_, hw, hw, c, c, 1, 1) + 4.0 * batch_ * hw * hw * c;
    const int64_t params = 2 * (c * k * k + c * c + 2 * c) * 4;
    const double moved = 2.0 * (2.0 * bytes(in) + 2.0 * bytes(hw, c)) + params;
    return {b_.add_op(name, "SepConv" + std::to_string(k), 2 * per_round, moved, bytes(hw, c),
                      {in.op}, params),
            hw, c};
  }
  Tensor pool(const std::string& name, const std::string& type, const Tensor& in, int stride) {
    const int64_t hw = in.hw / stride;
    const double flops = 9.0 * batch_ * hw * hw * in.c;
    return {b_.add_op(name, type, flops, bytes(in) + bytes(hw, in.c), bytes(hw, in.c), {in.op}), hw,
            in.c};
  }
  Tensor apply(const std::string& name, CellOp op, const Tensor& in, int stride) {
    switch (op) {
      case kConv3:
        return conv(name, "Conv3x3", in, in.c, 3, stride);
      case kConv5:
        return conv(name, "Conv5x5", in, in.c, 5, stride);
      case kSep3:
        return sep_conv(name, in, 3, stride);
      case kSep5:
        return sep_conv(name, in, 5, stride);
      case kAvgPool:
        return pool(name, "AvgPool", in, stride);
      case kMaxPool:
        return pool(name, "MaxPool", in, stride);
      default:
        // Identity; on a reduction cell's input it must halve the map: a 1x1 stride-2 conv
        // (ENAS's factorized reduction).
        return stride == 1 ? in : conv(name, "FactorizedReduce", in, in.c, 1, 2);
    }
  }
  Tensor sum(const std::string& name, const std::vector<Tensor>& parts) {
    std::vector<int> ins;
    for (const auto& p : parts) ins.push_back(p.op);
    const Tensor& t = parts[0];
    const double n = static_cast<double>(parts.size());
    return {b_.add_op(name, "Add", (n - 1) * batch_ * t.hw * t.hw * t.c, (n + 1) * bytes(t),
                      bytes(t), ins),
            t.hw, t.c};
  }

  Tensor cell(const std::string& p, const Tensor& pp, const Tensor& prev, int64_t c, bool reduction,
              const CellArch& arch) {
    // Calibrate both inputs to c channels at prev's resolution.
    Tensor in0 = conv(p + "/calib0", pp.hw != prev.hw ? "FactorizedReduce" : "Conv1x1", pp, c, 1,
                      pp.hw != prev.hw ? 2 : 1);
    Tensor in1 = conv(p + "/calib1", "Conv1x1", prev, c, 1, 1);
    std::vector<Tensor> nodes = {in0, in1};
    const int n = static_cast<int>(arch.in_a.size());
    std::vector<char> used(n + 2, 0);
    for (int j = 0; j < n; ++j) {
      std::vector<Tensor> parts;
      const int ins[2] = {arch.in_a[j], arch.in_b[j]};
      const CellOp ops[2] = {arch.op_a[j], arch.op_b[j]};
      for (int s = 0; s < 2; ++s) {
        used[ins[s]] = 1;
        const int stride = reduction && ins[s] < 2 ? 2 : 1;
        parts.push_back(apply(
            p + "/n" + std::to_string(j + 2) + "_" + std::to_string(s) + "_" + kOpNames[ops[s]],
            ops[s], nodes[ins[s]], stride));
      }
      if (parts[0].op == parts[1].op) parts.pop_back();
      nodes.push_back(sum(p + "/n" + std::to_string(j + 2), parts));
    }
    std::vector<int> loose;
    for (int j = 2; j < n + 2; ++j)
      if (!used[j]) loose.push_back(nodes[j].op);
    const Tensor& any = nodes.back();
    const int64_t k = static_cast<int64_t>(loose.size());
    if (k == 1) return nodes.back();
    return {b_.add_op(p + "/concat", "Concat", 0, 2.0 * k * bytes(any), k * bytes(any), loose),
            any.hw, k * c};
  }

  Graph build(FamilyRng& rng) {
    const CellArch normal = sample_cell(spec_.cell_nodes, rng);
    const CellArch reduce = sample_cell(spec_.cell_nodes, rng);
    Tensor data{b_.add_op("data", "Input", 0, 2.0 * bytes(32, 3), bytes(32, 3), {}, 0, false), 32,
                3};
    Tensor stem = conv("stem", "Conv3x3", data, spec_.width, 3, 1);
    Tensor pp = stem, prev = stem;
    int cell_index = 0;
    for (int stage = 0; stage < 3; ++stage) {
      const int64_t c = static_cast<int64_t>(spec_.width) << stage;
      for (int i = (stage == 0 ? 0 : -1); i < spec_.layers; ++i) {
        const bool reduction = i < 0;
        Tensor next = cell("cell" + std::to_string(cell_index++) + (reduction ? "_reduce" : ""), pp,
                           prev, c, reduction, reduction ? reduce : normal);
        pp = prev;
        prev = next;
      }
    }
    // Global average pooling, the 10-way classifier, and softmax cross-entropy.
    const int64_t fc_params = (prev.c * 10 + 10) * 4;
    const int head =
        b_.add_op("head", "GlobalPoolFC",
                  1.0 * batch_ * prev.hw * prev.hw * prev.c + 2.0 * batch_ * prev.c * 10,
                  bytes(prev) + fc_params, batch_ * 10 * 4, {prev.op}, fc_params);
    const int loss = b_.add_op("loss", "SoftmaxCrossEntropy", 5.0 * batch_ * 10,
                               3.0 * batch_ * 10 * 4, 4, {head});
    b_.set_loss(loss);
    return b_.build();
  }

 private:
  const FamilySpec& spec_;
  TrainingGraphBuilder b_;
  int64_t batch_;
};

}  // namespace

Graph build_cifar10_graph(const FamilySpec& spec, FamilyRng& rng, const std::string& name) {
  CnnBuilder b(spec, name);
  return b.build(rng);
}

}  // namespace placeto
