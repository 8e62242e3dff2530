#include "learner/loss.h"

#include "common/error.h"

namespace placeto {
namespace {

// Steps [first, first + count) of the episode as tensors; the features are read in place
// (from_blob), not copied.
struct StepInputs {
  torch::Tensor x, cur, act;
};

StepInputs step_inputs(const EpisodeRecord& rec, int first, int count) {
  const int64_t n = rec.num_nodes, w = rec.width;
  PLACETO_CHECK_EQ(rec.features.size(), static_cast<size_t>(rec.steps()) * n * w);
  StepInputs in;
  in.x =
      torch::from_blob(const_cast<float*>(rec.features.data()) + static_cast<size_t>(first) * n * w,
                       {count, n, w}, torch::kFloat);
  in.cur =
      torch::from_blob(const_cast<int64_t*>(rec.current.data()) + first, {count}, torch::kInt64);
  in.act =
      torch::from_blob(const_cast<int64_t*>(rec.actions.data()) + first, {count}, torch::kInt64);
  return in;
}

torch::Tensor to_tensor(const std::vector<double>& v, int first, int count) {
  std::vector<float> f(v.begin() + first, v.begin() + first + count);
  return torch::from_blob(f.data(), {count}, torch::kFloat).clone();
}

// Sum over the steps of KL(ref || pi); adds coef * it / total to *loss.
void add_kl(const KlTerm& kl, const torch::Tensor& logp, int first, int count, int total,
            torch::Tensor* loss, LossParts* out) {
  if (!kl.ref_log_dist || kl.coef <= 0) return;
  torch::Tensor ref = kl.ref_log_dist->narrow(0, first, count);
  torch::Tensor per_step = (ref.exp() * (ref - logp)).sum(1);
  *loss = *loss + kl.coef * per_step.sum() / total;
  out->kl = per_step.mean().item<double>();
}

}  // namespace

LossParts episode_loss(PolicyNet& policy, const GraphTensors& gt, const EpisodeRecord& rec,
                       const std::vector<double>& advantages, double entropy_beta, int first,
                       int count, const KlTerm& kl) {
  const int total = rec.steps();
  if (count < 0) count = total - first;
  PLACETO_CHECK(first >= 0 && first + count <= total && count > 0);
  PLACETO_CHECK_EQ(static_cast<int>(advantages.size()), total);
  const StepInputs in = step_inputs(rec, first, count);
  torch::Tensor a = to_tensor(advantages, first, count);
  torch::Tensor logits = policy->forward(in.x, in.cur, gt);
  torch::Tensor logp = torch::log_softmax(logits, 1);
  torch::Tensor chosen = logp.gather(1, in.act.unsqueeze(1)).squeeze(1);
  torch::Tensor entropy = -(logp.exp() * logp).sum(1);
  torch::Tensor pg = -(chosen * a).sum() / total;
  LossParts out;
  out.loss = pg - entropy_beta * entropy.sum() / total;
  add_kl(kl, logp, first, count, total, &out.loss, &out);
  out.entropy = entropy.mean().item<double>();
  out.pg_loss = pg.item<double>();
  return out;
}

EpisodeEval evaluate_episode(PolicyNet& policy, const GraphTensors& gt, const EpisodeRecord& rec) {
  torch::NoGradGuard no_grad;
  const int total = rec.steps();
  PLACETO_CHECK(total > 0);
  const StepInputs in = step_inputs(rec, 0, total);
  EpisodeEval out;
  torch::Tensor logits;
  if (policy->config().value_head) {
    auto [l, v] = policy->forward_with_value(in.x, in.cur, gt);
    logits = l;
    torch::Tensor vc = v.contiguous();
    out.values.assign(vc.data_ptr<float>(), vc.data_ptr<float>() + total);
  } else {
    logits = policy->forward(in.x, in.cur, gt);
  }
  out.log_dist = torch::log_softmax(logits, 1).contiguous();
  torch::Tensor chosen = out.log_dist.gather(1, in.act.unsqueeze(1)).squeeze(1).contiguous();
  out.logp.assign(chosen.data_ptr<float>(), chosen.data_ptr<float>() + total);
  return out;
}

LossParts ppo_episode_loss(PolicyNet& policy, const GraphTensors& gt, const EpisodeRecord& rec,
                           const std::vector<double>& advantages,
                           const std::vector<double>& value_targets,
                           const std::vector<double>& old_logp, const PpoTerms& terms,
                           const KlTerm& kl) {
  const int total = rec.steps();
  PLACETO_CHECK(total > 0);
  PLACETO_CHECK_EQ(static_cast<int>(advantages.size()), total);
  PLACETO_CHECK_EQ(static_cast<int>(value_targets.size()), total);
  PLACETO_CHECK_EQ(static_cast<int>(old_logp.size()), total);
  const StepInputs in = step_inputs(rec, 0, total);
  torch::Tensor a = to_tensor(advantages, 0, total);
  torch::Tensor target = to_tensor(value_targets, 0, total);
  torch::Tensor old = to_tensor(old_logp, 0, total);
  auto [logits, values] = policy->forward_with_value(in.x, in.cur, gt);
  torch::Tensor logp = torch::log_softmax(logits, 1);
  torch::Tensor chosen = logp.gather(1, in.act.unsqueeze(1)).squeeze(1);
  torch::Tensor ratio = (chosen - old).exp();
  torch::Tensor clipped = ratio.clamp(1.0 - terms.clip, 1.0 + terms.clip);
  torch::Tensor surrogate = torch::min(ratio * a, clipped * a);
  torch::Tensor pg = -surrogate.sum() / total;
  torch::Tensor vloss = (values - target).pow(2).sum() / total;
  torch::Tensor entropy = -(logp.exp() * logp).sum(1);
  LossParts out;
  out.loss = pg + terms.value_coef * vloss - terms.entropy_beta * entropy.sum() / total;
  add_kl(kl, logp, 0, total, total, &out.loss, &out);
  out.entropy = entropy.mean().item<double>();
  out.pg_loss = pg.item<double>();
  out.value_loss = vloss.item<double>();
  out.clip_fraction = ((ratio - 1.0).abs() > terms.clip).to(torch::kFloat).mean().item<double>();
  return out;
}

}  // namespace placeto
