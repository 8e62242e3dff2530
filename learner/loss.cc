#include "learner/loss.h"

#include "common/error.h"

namespace placeto {

LossParts episode_loss(PolicyNet& policy, const GraphTensors& gt, const EpisodeRecord& rec,
                       const std::vector<double>& advantages, double entropy_beta, int first,
                       int count) {
  const int total = rec.steps();
  if (count < 0) count = total - first;
  PLACETO_CHECK(first >= 0 && first + count <= total && count > 0);
  PLACETO_CHECK_EQ(static_cast<int>(advantages.size()), total);
  PLACETO_CHECK_EQ(rec.features.size(), static_cast<size_t>(total) * rec.num_nodes * rec.width);
  const int64_t n = rec.num_nodes, w = rec.width;
  // The recorded features are read in place (from_blob), not copied.
  torch::Tensor x =
      torch::from_blob(const_cast<float*>(rec.features.data()) + static_cast<size_t>(first) * n * w,
                       {count, n, w}, torch::kFloat);
  torch::Tensor cur =
      torch::from_blob(const_cast<int64_t*>(rec.current.data()) + first, {count}, torch::kInt64);
  torch::Tensor act =
      torch::from_blob(const_cast<int64_t*>(rec.actions.data()) + first, {count}, torch::kInt64);
  std::vector<float> adv(advantages.begin() + first, advantages.begin() + first + count);
  torch::Tensor a = torch::from_blob(adv.data(), {count}, torch::kFloat).clone();
  torch::Tensor logits = policy->forward(x, cur, gt);
  torch::Tensor logp = torch::log_softmax(logits, 1);
  torch::Tensor chosen = logp.gather(1, act.unsqueeze(1)).squeeze(1);
  torch::Tensor entropy = -(logp.exp() * logp).sum(1);
  torch::Tensor pg = -(chosen * a).sum() / total;
  LossParts out;
  out.loss = pg - entropy_beta * entropy.sum() / total;
  out.entropy = entropy.mean().item<double>();
  out.pg_loss = pg.item<double>();
  return out;
}

}  // namespace placeto
