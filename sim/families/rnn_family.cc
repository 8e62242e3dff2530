// ptb and nmt: recurrent models built from ENAS-style recurrent cells (Pham et al. 2018).
// Cell node 0 reads the step's input x_t and the previous state h_{t-1}; node j >= 1 reads
// one earlier node i.  Each node is a highway unit c = sigmoid(W_c h_i), h_j = c * f(W_h h_i)
// + (1 - c) * h_i with a sampled activation f (tanh, relu, identity, sigmoid); the cell's
// output averages the nodes no other node reads.  One gradient-carrying op per cell node and
// time step (the paper's graphs were grouped the same way); the weights of a node are one
// variable shared by all time steps.
#include <string>
#include <vector>

#include "sim/cost_model.h"
#include "sim/families/generators.h"
#include "sim/families/training_graph.h"

namespace placeto {
namespace {

const char* const kActivations[] = {"Tanh", "Relu", "Identity", "Sigmoid"};

struct RnnCellArch {
  std::vector<int> prev;  // node j reads node prev[j] (prev[0] = -1: x_t and h_{t-1})
  std::vector<int> act;
};

RnnCellArch sample_rnn_cell(int nodes, FamilyRng& rng) {
  RnnCellArch a;
  for (int j = 0; j < nodes; ++j) {
    a.prev.push_back(j == 0 ? -1 : rng.below(j));
    a.act.push_back(rng.below(4));
  }
  return a;
}

class RnnBuilder {
 public:
  RnnBuilder(const FamilySpec& spec, const std::string& name)
      : spec_(spec), b_(name, device_profile(spec.profile)), batch_(spec.batch), h_(spec.width) {}

  int64_t state_bytes() const { return batch_ * h_ * 4; }

  // A recurrent layer: the cell's variables, shared over time.
  struct Layer {
    std::string name;
    RnnCellArch arch;
    std::vector<int> vars;
  };
  Layer make_layer(const std::string& name, int64_t input_width, FamilyRng& rng) {
    Layer l;
    l.name = name;
    l.arch = sample_rnn_cell(spec_.cell_nodes, rng);
    for (int j = 0; j < spec_.cell_nodes; ++j) {
      const int64_t in = j == 0 ? input_width + h_ : h_;
      l.vars.push_back(b_.add_variable(name + "/w" + std::to_string(j), in * 2 * h_ * 4));
    }
    return l;
  }

  // One step of `layer`: x is the input op (-1: none), h the previous state op (-1: zero).
  // Returns the op holding h_t.
  int step(const Layer& layer, int t, int x, int64_t x_width, int h) {
    const std::string p = layer.name + "/t" + std::to_string(t);
    std::vector<int> node_ops;
    const int n = static_cast<int>(layer.arch.prev.size());
    std::vector<char> used(n, 0);
    for (int j = 0; j < n; ++j) {
      std::vector<int> ins;
      int64_t in_width = h_;
      if (j == 0) {
        if (x >= 0) ins.push_back(x);
        if (h >= 0) ins.push_back(h);
        in_width = x_width + h_;
      } else {
        ins.push_back(node_ops[layer.arch.prev[j]]);
        used[layer.arch.prev[j]] = 1;
      }
      const double flops = matmul_flops(batch_, 2 * h_, in_width) + 8.0 * batch_ * h_;
      const double moved = in_width * 2.0 * h_ * 4 + batch_ * in_width * 4.0 + 3.0 * state_bytes();
      const int op = b_.add_op(p + "/n" + std::to_string(j),
                               std::string("Highway") + kActivations[layer.arch.act[j]], flops,
                               moved, state_bytes(), ins);
      b_.use_variable(op, layer.vars[j]);
      node_ops.push_back(op);
    }
    std::vector<int> loose;
    for (int j = 0; j < n; ++j)
      if (!used[j]) loose.push_back(node_ops[j]);
    if (loose.size() == 1) return loose[0];
    const double k = static_cast<double>(loose.size());
    return b_.add_op(p + "/avg", "Mean", k * batch_ * h_, (k + 1) * state_bytes(), state_bytes(),
                     loose);
  }

  // Projection to the vocabulary and softmax cross-entropy of one step (per-example losses).
  int softmax(const std::string& name, int in, int var) {
    const int64_t v = spec_.vocab;
    const double flops = matmul_flops(batch_, v, h_) + 5.0 * batch_ * v;
    const double moved = h_ * v * 4.0 + 3.0 * batch_ * v * 4 + state_bytes();
    const int op = b_.add_op(name, "SoftmaxCrossEntropy", flops, moved, batch_ * 4, {in});
    b_.use_variable(op, var);
    return op;
  }
  int embedding(const std::string& name, int64_t vocab) {
    const int64_t steps = spec_.steps;
    return b_.add_op(name, "Embedding", 0, 2.0 * steps * state_bytes(), steps * state_bytes(), {},
                     vocab * h_ * 4);
  }
  int loss(const std::vector<int>& parts) {
    const double k = static_cast<double>(parts.size());
    const int op = b_.add_op("loss", "Sum", k * batch_, k * batch_ * 4, 4, parts);
    b_.set_loss(op);
    return op;
  }

  Graph build_ptb(FamilyRng& rng) {
    const int emb = embedding("embedding", spec_.vocab);
    std::vector<Layer> layers;
    for (int l = 0; l < spec_.layers; ++l)
      layers.push_back(make_layer("rnn" + std::to_string(l), h_, rng));
    const int w_soft = b_.add_variable("softmax/w", h_ * spec_.vocab * 4);
    std::vector<int> state(spec_.layers, -1), losses;
    for (int t = 0; t < spec_.steps; ++t) {
      int x = emb;
      for (int l = 0; l < spec_.layers; ++l) {
        state[l] = step(layers[l], t, x, h_, state[l]);
        x = state[l];
      }
      losses.push_back(softmax("softmax/t" + std::to_string(t), x, w_soft));
    }
    loss(losses);
    return b_.build();
  }

  // Bidirectional encoder, a decoder of `layers` cells started from the encoder's final
  // states, and Luong attention over the encoder outputs after the decoder's top layer (no
  // input feeding, so attention and softmax of a step overlap the later steps).
  Graph build_nmt(FamilyRng& rng) {
    const int T = spec_.steps;
    const int src = embedding("src_embedding", spec_.vocab);
    const int tgt = embedding("tgt_embedding", spec_.vocab);
    Layer fw = make_layer("enc_fw", h_, rng);
    Layer bw = make_layer("enc_bw", h_, rng);
    std::vector<Layer> dec;
    for (int l = 0; l < spec_.layers; ++l)
      dec.push_back(make_layer("dec" + std::to_string(l), h_, rng));
    const int w_att = b_.add_variable("attention/w", 3 * h_ * h_ * 4);
    const int w_soft = b_.add_variable("softmax/w", h_ * spec_.vocab * 4);
    std::vector<int> fw_out(T), bw_out(T);
    int s = -1;
    for (int t = 0; t < T; ++t) fw_out[t] = s = step(fw, t, src, h_, s);
    s = -1;
    for (int t = T - 1; t >= 0; --t) bw_out[t] = s = step(bw, t, src, h_, s);
    // Attention memory: the concatenated outputs projected to keys (W_k: 2H x H).
    std::vector<int> enc_outs(fw_out);
    enc_outs.insert(enc_outs.end(), bw_out.begin(), bw_out.end());
    const int64_t mem_bytes = T * batch_ * 2 * h_ * 4;
    const int64_t key_params = 2 * h_ * h_ * 4;
    const int memory = b_.add_op("attention/memory", "MatMul", 2.0 * T * batch_ * 2 * h_ * h_,
                                 2.0 * mem_bytes + key_params, mem_bytes + T * state_bytes(),
                                 enc_outs, key_params);
    const int64_t bridge_params = 2 * h_ * h_ * 4;
    const int bridge = b_.add_op("bridge", "Dense", 2.0 * batch_ * 2 * h_ * h_,
                                 3.0 * state_bytes() + bridge_params, state_bytes(),
                                 {fw_out[T - 1], bw_out[0]}, bridge_params);
    std::vector<int> state(spec_.layers, bridge), losses;
    for (int t = 0; t < T; ++t) {
      int x = tgt;
      for (int l = 0; l < spec_.layers; ++l) {
        state[l] = step(dec[l], t, x, h_, state[l]);
        x = state[l];
      }
      // Scores and context over T source positions, then tanh(W_a [context; h]).
      const double flops =
          2.0 * batch_ * T * h_ + 2.0 * batch_ * T * 2 * h_ + 2.0 * batch_ * 3 * h_ * h_;
      const double moved = static_cast<double>(mem_bytes) + 3.0 * h_ * h_ * 4 + 3.0 * state_bytes();
      const int att = b_.add_op("attention/t" + std::to_string(t), "Attention", flops, moved,
                                state_bytes(), {x, memory});
      b_.use_variable(att, w_att);
      losses.push_back(softmax("softmax/t" + std::to_string(t), att, w_soft));
    }
    loss(losses);
    return b_.build();
  }

 private:
  const FamilySpec& spec_;
  TrainingGraphBuilder b_;
  int64_t batch_, h_;
};

}  // namespace

Graph build_ptb_graph(const FamilySpec& spec, FamilyRng& rng, const std::string& name) {
  RnnBuilder b(spec, name);
  return b.build_ptb(rng);
}

Graph build_nmt_graph(const FamilySpec& spec, FamilyRng& rng, const std::string& name) {
  RnnBuilder b(spec, name);
  return b.build_nmt(rng);
}

}  // namespace placeto
