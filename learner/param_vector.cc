#include "learner/param_vector.h"

#include "common/error.h"

namespace placeto {

size_t count_parameters(PolicyNet& net) {
  size_t n = 0;
  for (auto& [name, p] : named_parameters_sorted(net)) n += static_cast<size_t>(p.numel());
  return n;
}

ParamLayout param_layout(PolicyNet& net) {
  ParamLayout layout;
  for (auto& [name, p] : named_parameters_sorted(net)) {
    layout.names.push_back(name);
    layout.shapes.push_back(p.sizes().vec());
  }
  return layout;
}

std::vector<float> get_flat_params(PolicyNet& net) {
  std::vector<float> out;
  out.reserve(count_parameters(net));
  for (auto& [name, p] : named_parameters_sorted(net)) {
    torch::Tensor c = p.detach().contiguous();
    out.insert(out.end(), c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
  }
  return out;
}

void set_flat_params(PolicyNet& net, const std::vector<float>& flat) {
  torch::NoGradGuard no_grad;
  size_t off = 0;
  for (auto& [name, p] : named_parameters_sorted(net)) {
    const size_t k = static_cast<size_t>(p.numel());
    PLACETO_CHECK_LE(off + k, flat.size());
    torch::Tensor src =
        torch::from_blob(const_cast<float*>(flat.data()) + off, p.sizes(), torch::kFloat);
    p.copy_(src);
    off += k;
  }
  PLACETO_CHECK_EQ(off, flat.size());
}

std::vector<float> get_flat_grads(PolicyNet& net) {
  std::vector<float> out;
  out.reserve(count_parameters(net));
  for (auto& [name, p] : named_parameters_sorted(net)) {
    if (p.grad().defined()) {
      torch::Tensor g = p.grad().contiguous();
      out.insert(out.end(), g.data_ptr<float>(), g.data_ptr<float>() + g.numel());
    } else {
      out.insert(out.end(), static_cast<size_t>(p.numel()), 0.0f);
    }
  }
  return out;
}

}  // namespace placeto
