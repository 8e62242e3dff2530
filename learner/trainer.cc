#include "learner/trainer.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <mutex>

#include "actors/rollout.h"
#include "common/error.h"
#include "common/rng.h"
#include "learner/loss.h"
#include "learner/param_vector.h"
#include "sim/placers/registry.h"
#include "training/advantages.h"

namespace placeto {

PolicyConfig make_policy_config(const TrainConfig& c) {
  PolicyConfig p;
  p.num_devices = c.devices;
  p.hidden = c.policy.hidden;
  p.message_passing = c.policy.message_passing;
  p.rounds = c.policy.rounds;
  p.parallel_aggregation = c.policy.parallel_aggregation;
  p.parallel_k = c.policy.parallel_k;
  p.features.with_memory = c.policy.with_memory;
  p.features.lookahead = c.policy.lookahead;
  p.features.memory_features = c.policy.memory_features;
  p.features.any_devices = c.policy.any_devices;
  p.value_head = c.algorithm == Algorithm::kPpo;
  return p;
}

std::vector<int32_t> teacher_placement(const std::string& teacher, const Graph& g,
                                       const Cluster& cluster, uint64_t seed,
                                       const EnvConfig& env) {
  PlacerOptions opt;
  opt.seed = static_cast<int64_t>(seed);
  if (teacher == "anneal" && env.start.kind == StartKind::kPlacer) {
    // Refinement: anneal polishes the episodes' start placement, whose device names the
    // labels keep, so that "leave this op where it is" is the label wherever anneal did.
    opt.initial = PlacementEnv(g, cluster, env).fixed_start();
    return make_placer(teacher)->place(g, cluster, opt).device;
  }
  Placement p = make_placer(teacher)->place(g, cluster, opt);
  canonical_device_names(g, cluster, &p.device);
  return p.device;
}

double scheduled_lr(const TrainerState& s, double lr_final, int64_t it) {
  return linear_schedule(s.lr_from_value, lr_final, it - s.lr_from_iteration,
                         s.lr_to_iteration - s.lr_from_iteration);
}

std::mt19937_64 Trainer::iteration_engine(uint64_t seed, int rank, int64_t it) {
  return seeded_engine(seed, rank, it);
}

Trainer::Trainer(TrainConfig config, std::vector<NamedGraph> train, Cluster cluster,
                 Communicator& comm)
    : config_(std::move(config)),
      train_(std::move(train)),
      cluster_(std::move(cluster)),
      comm_(comm),
      adam_(0) {
  PLACETO_CHECK(!train_.empty());
  PLACETO_CHECK_EQ(cluster_.num_devices(), config_.devices);
  {
    // Same initial weights on every rank: torch's global generator, seeded.  Ranks that are
    // threads of one process (common/comm/inproc) would otherwise race on it.
    static std::mutex init_mutex;
    std::lock_guard<std::mutex> lock(init_mutex);
    torch::manual_seed(config_.seed);
    policy_ = PolicyNet(make_policy_config(config_));
  }
  const bool levels = config_.policy.message_passing == MessagePassing::kSweep;
  for (size_t i = 0; i < train_.size(); ++i)
    clusters_.push_back(cluster_for_graph(config_, cluster_, train_[i].graph, i));
  const int above = config_.policy.coarse_above;
  for (size_t i = 0; i < train_.size(); ++i) {
    const Graph& g = train_[i].graph;
    coarse_.push_back(above > 0 && g.num_nodes() > above
                          ? std::make_unique<CoarseEpisode>(coarse_episode(
                                g, clusters_[i], config_.env, config_.policy.coarse_groups))
                          : nullptr);
    if (coarse_.back() && config_.imitation_iterations > 0)
      throw InputError("train graph '" + train_[i].name + "' has " + std::to_string(g.num_nodes()) +
                       " ops, above policy.coarse_above (" + std::to_string(above) +
                       "): imitation (imitation_iterations) needs graphs that are placed whole");
    tensors_.push_back(
        make_graph_tensors(coarse_.back() ? coarse_.back()->coarse.graph : g, levels));
    // A pool of environments per graph, filled up to episodes_per_iteration on first use; its
    // first one is made here, since its order gives the graph's episode length.
    envs_.emplace_back();
    envs_.back().push_back(make_env(i));
    max_steps_ = std::max(max_steps_, static_cast<int>(envs_.back().front()->order().size()));
  }
  if (config_.imitation_iterations > 0)
    for (size_t i = 0; i < train_.size(); ++i)
      teacher_.push_back(teacher_placement(config_.imitation_teacher, train_[i].graph, clusters_[i],
                                           config_.seed, config_.env));
  adam_ = Adam(count_parameters(policy_));
  state_.params = get_flat_params(policy_);
  state_.baselines = BaselineStore(config_.baseline_window);
  state_.world_size = comm_.size();
  state_.lr_from_value = config_.lr;
  state_.lr_to_iteration = config_.iterations;
}

std::unique_ptr<PlacementEnv> Trainer::make_env(size_t i) const {
  if (!coarse_[i])
    return std::make_unique<PlacementEnv>(train_[i].graph, clusters_[i], config_.env);
  const CoarseEpisode& ce = *coarse_[i];
  auto env = std::make_unique<PlacementEnv>(ce.coarse.graph, clusters_[i], ce.env,
                                            FineView{&train_[i].graph, &ce.coarse.group});
  if (ce.start) env->set_fixed_start(*ce.start);
  return env;
}

TrainerState Trainer::state() {
  state_.params = get_flat_params(policy_);
  state_.exp_avg = adam_.exp_avg();
  state_.exp_avg_sq = adam_.exp_avg_sq();
  state_.adam_step = adam_.step();
  return state_;
}

void Trainer::restore(const TrainerState& s) {
  const size_t n = count_parameters(policy_);
  if (s.params.size() != n || s.exp_avg.size() != n || s.exp_avg_sq.size() != n)
    throw InputError("checkpoint has " + std::to_string(s.params.size()) +
                     " parameters but this model has " + std::to_string(n) +
                     " (different policy settings?)");
  state_ = s;
  state_.world_size = comm_.size();
  state_.baselines = s.baselines;
  if (state_.lr_to_iteration <= 0) {  // not recorded: the schedule of this config
    state_.lr_from_iteration = 0;
    state_.lr_from_value = config_.lr;
    state_.lr_to_iteration = config_.iterations;
  }
  if (state_.lr_to_iteration != config_.iterations) {
    // `iterations` changed on resume: decay from today's rate over the iterations left.
    state_.lr_from_value = scheduled_lr(state_, config_.lr_final, state_.iteration);
    state_.lr_from_iteration = state_.iteration;
    state_.lr_to_iteration = config_.iterations;
  }
  set_flat_params(policy_, s.params);
  ref_policy_ = PolicyNet(nullptr);
  if (!s.kl_reference.empty()) {
    if (s.kl_reference.size() != n)
      throw InputError("checkpoint's KL reference has " + std::to_string(s.kl_reference.size()) +
                       " parameters but this model has " + std::to_string(n));
    ref_policy_ = PolicyNet(make_policy_config(config_));
    set_flat_params(ref_policy_, s.kl_reference);
  }
  adam_.exp_avg() = s.exp_avg;
  adam_.exp_avg_sq() = s.exp_avg_sq;
  adam_.set_step(s.adam_step);
}

IterationStats Trainer::iterate() {
  using clock = std::chrono::steady_clock;
  const auto t_start = clock::now();
  const int64_t it = state_.iteration;
  const int rank = comm_.rank();
  const int k = config_.episodes_per_iteration;
  std::mt19937_64 rng = iteration_engine(config_.seed, rank, it);
  policy_->zero_grad();
  // One row per episode, all-gathered: the columns below, then the returns.
  enum Col {
    kGraph,
    kSteps,
    kFinal,
    kStart,
    kEntropy,
    kLoss,
    kOnPolicy,
    kBest,
    kMoves,
    kAdvMean,
    kAdvSd,
    kGradCos,
    kValueLoss,
    kClipFraction,
    kKl,
    kReturns
  };
  const int row = kReturns + max_steps_;
  std::vector<double> mine(static_cast<size_t>(k) * row, 0.0);
  double sim_s = 0, policy_s = 0, baseline0 = 0;
  // One graph per rank and iteration; its k episodes run in lockstep (batched forward).
  const int gi = static_cast<int>(rng() % train_.size());
  auto& pool = envs_[gi];
  while (static_cast<int>(pool.size()) < k) pool.push_back(make_env(static_cast<size_t>(gi)));
  std::vector<PlacementEnv*> batch;
  for (int e = 0; e < k; ++e) batch.push_back(pool[e].get());
  const bool imitate = it < config_.imitation_iterations;
  const bool ppo = !imitate && config_.algorithm == Algorithm::kPpo;
  // The warm-start policy of the KL term: the one at the hand-over from imitation.
  if (!imitate && config_.kl_coef > 0 && state_.kl_reference.empty())
    state_.kl_reference = get_flat_params(policy_);
  if (!state_.kl_reference.empty() && !ref_policy_) {
    ref_policy_ = PolicyNet(make_policy_config(config_));
    set_flat_params(ref_policy_, state_.kl_reference);
  }
  const bool use_kl = !imitate && config_.kl_coef > 0;
  std::vector<EpisodeRecord> recs;
  if (imitate) {
    // One episode along the teacher's placement, the others sampled from the policy
    // (DAgger-style: the states the policy visits), all labelled with the teacher's device.
    recs = run_episodes(policy_, tensors_[gi], {batch[0]}, rng, ActionMode::kForced, true,
                        &teacher_[gi]);
    if (k > 1) {
      std::vector<EpisodeRecord> more = run_episodes(
          policy_, tensors_[gi], std::vector<PlacementEnv*>(batch.begin() + 1, batch.end()), rng,
          ActionMode::kSample);
      for (auto& r : more) recs.push_back(std::move(r));
    }
  } else {
    recs = run_episodes(policy_, tensors_[gi], batch, rng, ActionMode::kSample);
  }
  Returns rets(k), advs(k), value_targets, old_logp(k);
  for (int e = 0; e < k; ++e) rets[e] = recs[e].returns(config_.discount);
  std::vector<torch::Tensor> ref_dists(k);
  if (use_kl)
    for (int e = 0; e < k; ++e)
      ref_dists[e] = evaluate_episode(ref_policy_, tensors_[gi], recs[e]).log_dist;
  if (imitate) {
    // Cross-entropy with the teacher = the policy-gradient loss with the teacher's actions
    // and unit advantages.  The sampled episodes' returns (of the actions the policy took)
    // still feed the window baselines; the teacher-forced episode's do not (off-policy: they
    // would bias the advantages when RL takes over).
    for (int e = 0; e < k; ++e) {
      advs[e].assign(rets[e].size(), 1.0);
      for (size_t t = 0; t < recs[e].actions.size(); ++t)
        recs[e].actions[t] = teacher_[gi][recs[e].current[t]];
    }
  } else if (ppo) {
    // GAE from the value head, and the log-probabilities the episodes were sampled with
    // (the parameters have not moved since).
    Returns rewards(k), values(k);
    for (int e = 0; e < k; ++e) {
      EpisodeEval ev = evaluate_episode(policy_, tensors_[gi], recs[e]);
      rewards[e] = recs[e].rewards;
      values[e] = std::move(ev.values);
      old_logp[e] = std::move(ev.logp);
    }
    advs = gae_advantages(rewards, values, config_.discount, config_.gae_lambda, &value_targets);
  } else if (config_.baseline == BaselineKind::kLeaveOneOut) {
    advs = leave_one_out_advantages(rets);
  } else {
    for (int e = 0; e < k; ++e) {
      std::vector<double> base = state_.baselines.baseline(train_[gi].name, recs[e].steps());
      advs[e].resize(rets[e].size());
      for (size_t t = 0; t < rets[e].size(); ++t) advs[e][t] = rets[e][t] - base[t];
    }
  }
  MeanSd adv_stats;
  if (!imitate) {
    for (int e = 0; e < k; ++e) baseline0 += rets[e].empty() ? 0 : rets[e][0] - advs[e][0];
    adv_stats = advantage_stats(advs);
    if (config_.normalize_advantages) normalize_advantages(&advs);
  }
  // The gradients of the two halves of the batch, for their cosine (signal-to-noise), from
  // the first pass.  REINFORCE makes one pass; PPO ppo_epochs, each an all-reduce and an Adam
  // step.
  const int half = k / 2;
  const int passes = ppo ? config_.ppo_epochs : 1;
  PpoTerms terms;
  terms.clip = config_.ppo_clip;
  terms.value_coef = config_.value_coef;
  terms.entropy_beta = config_.entropy_beta;
  IterationStats st;
  st.iteration = it + 1;
  st.lr = scheduled_lr(state_, config_.lr_final, it);
  double reduce_s = 0;
  for (int pass = 0; pass < passes; ++pass) {
    policy_->zero_grad();
    std::vector<float> first_half;
    for (int e = 0; e < k; ++e) {
      const EpisodeRecord& rec = recs[e];
      auto tb = clock::now();
      if (pass == 0 && e == half && half > 0) first_half = get_flat_grads(policy_);
      KlTerm kl;
      if (use_kl) {
        kl.ref_log_dist = &ref_dists[e];
        kl.coef = config_.kl_coef;
      }
      LossParts lp = ppo ? ppo_episode_loss(policy_, tensors_[gi], rec, advs[e], value_targets[e],
                                            old_logp[e], terms, kl)
                         : episode_loss(policy_, tensors_[gi], rec, advs[e],
                                        imitate ? 0.0 : config_.entropy_beta, 0, -1, kl);
      (lp.loss / static_cast<double>(k)).backward();
      policy_s += std::chrono::duration<double>(clock::now() - tb).count();
      if (pass > 0) continue;
      sim_s += rec.sim_seconds;
      policy_s += rec.policy_seconds;
      double* r = &mine[static_cast<size_t>(e) * row];
      r[kGraph] = gi;
      r[kSteps] = rec.steps();
      r[kFinal] = rec.final_runtime_us;
      r[kStart] = rec.start_runtime_us;
      r[kEntropy] = lp.entropy;
      r[kLoss] = lp.loss.item<double>();
      r[kOnPolicy] = !(imitate && e == 0);
      r[kBest] = rec.best_runtime_us;
      r[kMoves] = rec.steps() > 0 ? static_cast<double>(rec.moves) / rec.steps() : 0.0;
      r[kAdvMean] = adv_stats.mean;
      r[kAdvSd] = adv_stats.sd;
      r[kValueLoss] = lp.value_loss;
      r[kClipFraction] = lp.clip_fraction;
      r[kKl] = lp.kl;
      std::copy(rets[e].begin(), rets[e].end(), r + kReturns);
    }
    // Average gradients over ranks; identical Adam updates everywhere.
    std::vector<float> grads = get_flat_grads(policy_);
    if (pass == 0) {
      double grad_cos = std::nan("");
      if (!first_half.empty()) {
        std::vector<float> second_half(grads.size());
        for (size_t i = 0; i < grads.size(); ++i) second_half[i] = grads[i] - first_half[i];
        grad_cos = cosine_similarity(first_half, second_half);
      }
      for (int e = 0; e < k; ++e) mine[static_cast<size_t>(e) * row + kGradCos] = grad_cos;
    }
    const auto reduce_t0 = std::chrono::steady_clock::now();
    comm_.all_reduce(grads.data(), grads.size(), ReduceOp::kMean);
    reduce_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - reduce_t0).count();
    const double norm = clip_global_norm(grads.data(), grads.size(), config_.grad_clip);
    if (pass == 0) st.grad_norm = norm;
    // Hand-over from imitation to RL: a fresh optimizer.  The moments of the cross-entropy's
    // gradients would otherwise set the size of the first RL steps.
    if (pass == 0 && config_.imitation_iterations > 0 && it == config_.imitation_iterations)
      adam_ = Adam(adam_.size());
    std::vector<float> params = get_flat_params(policy_);
    adam_.update(params.data(), grads.data(), st.lr);
    set_flat_params(policy_, params);
  }
  // Every rank's episodes, in rank order: baselines and statistics.
  std::vector<double> all = comm_.all_gather_doubles(mine);
  const int episodes = static_cast<int>(all.size() / row);
  double sum_rt = 0, best = 0, sum_ratio = 0, sum_ent = 0, sum_loss = 0, sum_best = 0;
  double sum_moves = 0, sum_adv_mean = 0, sum_adv_sd = 0, sum_cos = 0;
  double sum_vloss = 0, sum_clip = 0, sum_kl = 0;
  for (int e = 0; e < episodes; ++e) {
    const double* r = &all[static_cast<size_t>(e) * row];
    const int gi = static_cast<int>(r[kGraph]);
    const int steps = static_cast<int>(r[kSteps]);
    if (r[kOnPolicy] != 0)
      state_.baselines.add(train_[gi].name,
                           std::vector<double>(r + kReturns, r + kReturns + steps));
    sum_rt += r[kFinal];
    best = e == 0 ? r[kFinal] : std::min(best, r[kFinal]);
    sum_ratio += r[kFinal] / r[kStart];
    sum_best += r[kBest] / r[kStart];
    sum_ent += r[kEntropy];
    sum_loss += r[kLoss];
    sum_moves += r[kMoves];
    sum_adv_mean += r[kAdvMean];
    sum_adv_sd += r[kAdvSd];
    sum_cos += r[kGradCos];
    sum_vloss += r[kValueLoss];
    sum_clip += r[kClipFraction];
    sum_kl += r[kKl];
  }
  state_.iteration = it + 1;
  state_.episodes += episodes;
  st.mean_runtime_us = sum_rt / episodes;
  st.best_runtime_us = best;
  st.mean_ratio = sum_ratio / episodes;
  st.entropy = sum_ent / episodes;
  st.loss = sum_loss / episodes;
  st.baseline = baseline0 / k;
  st.best_ratio = sum_best / episodes;
  st.move_fraction = sum_moves / episodes;
  st.adv_mean = sum_adv_mean / episodes;
  st.adv_sd = sum_adv_sd / episodes;
  st.grad_cosine = sum_cos / episodes;
  st.value_loss = sum_vloss / episodes;
  st.clip_fraction = sum_clip / episodes;
  st.kl = sum_kl / episodes;
  st.allreduce_s = reduce_s;
  st.sim_s = sim_s;
  st.policy_s = policy_s;
  st.iteration_s = std::chrono::duration<double>(clock::now() - t_start).count();
  st.episodes_per_s = st.iteration_s > 0 ? episodes / st.iteration_s : 0;
  state_.wall_seconds += st.iteration_s;
  return st;
}

void Trainer::run(const std::function<bool()>& stop,
                  const std::function<void(const IterationStats&)>& after_iteration) {
  while (state_.iteration < config_.iterations) {
    if (stop && stop()) break;
    IterationStats st = iterate();
    if (after_iteration) after_iteration(st);
  }
}

}  // namespace placeto
