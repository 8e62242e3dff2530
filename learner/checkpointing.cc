#include "learner/checkpointing.h"

#include <sstream>

#include "common/checkpoint/checkpoint_compat.h"
#include "common/error.h"
#include "learner/train_config.h"

namespace placeto {

size_t ParamLayout::total() const {
  size_t n = 0;
  for (const auto& s : shapes) n += static_cast<size_t>(shape_numel(s));
  return n;
}

namespace {

std::map<std::string, NamedArray> split_flat(const std::vector<float>& flat,
                                             const ParamLayout& layout) {
  PLACETO_CHECK_EQ(flat.size(), layout.total());
  std::map<std::string, NamedArray> out;
  size_t off = 0;
  for (size_t i = 0; i < layout.names.size(); ++i) {
    const size_t k = static_cast<size_t>(shape_numel(layout.shapes[i]));
    out[layout.names[i]] = NamedArray::from_floats(
        layout.shapes[i], std::vector<float>(flat.begin() + off, flat.begin() + off + k));
    off += k;
  }
  return out;
}

std::vector<float> join_flat(const std::map<std::string, NamedArray>& arrays,
                             const ParamLayout& layout, const std::string& group,
                             const std::string& source) {
  std::vector<float> flat;
  flat.reserve(layout.total());
  for (const auto& name : layout.names) {
    auto it = arrays.find(name);
    if (it == arrays.end())
      throw InputError(source + ": " + group + "/" + name + " is missing from the checkpoint");
    std::vector<float> v = it->second.to_floats();
    flat.insert(flat.end(), v.begin(), v.end());
  }
  return flat;
}

// /schedules/lr: [from iteration, rate there, to iteration] (TrainerState).
constexpr char kLrSchedule[] = "lr";
// /schedules/kl_reference: the warm-start policy's flat parameters (TrainerState).
constexpr char kKlReference[] = "kl_reference";

ShapeMap shape_map(const ParamLayout& layout) {
  ShapeMap m;
  for (size_t i = 0; i < layout.names.size(); ++i) m[layout.names[i]] = layout.shapes[i];
  return m;
}

}  // namespace

CheckpointData trainer_state_to_checkpoint(const TrainerState& s, const ParamLayout& layout,
                                           const std::string& config_yaml, uint64_t seed) {
  CheckpointData c;
  c.step = s.iteration;
  c.episodes = s.episodes;
  c.world_size = s.world_size;
  c.config_yaml = config_yaml;
  c.model = split_flat(s.params, layout);
  c.optim_exp_avg = split_flat(s.exp_avg, layout);
  c.optim_exp_avg_sq = split_flat(s.exp_avg_sq, layout);
  c.optim_step = s.adam_step;
  for (const auto& [graph, episodes] : s.baselines.history()) {
    std::vector<double> flat;
    std::vector<int64_t> lengths;
    for (const auto& ret : episodes) {
      lengths.push_back(static_cast<int64_t>(ret.size()));
      flat.insert(flat.end(), ret.begin(), ret.end());
    }
    c.baselines[graph + "/returns"] =
        NamedArray::from_doubles({static_cast<int64_t>(flat.size())}, flat);
    c.baselines[graph + "/lengths"] =
        NamedArray::from_int64s({static_cast<int64_t>(lengths.size())}, lengths);
  }
  c.schedules[kLrSchedule] =
      NamedArray::from_doubles({3}, {static_cast<double>(s.lr_from_iteration), s.lr_from_value,
                                     static_cast<double>(s.lr_to_iteration)});
  if (!s.kl_reference.empty())
    c.schedules[kKlReference] =
        NamedArray::from_floats({static_cast<int64_t>(s.kl_reference.size())}, s.kl_reference);
  for (int r = 0; r < s.world_size; ++r) {
    std::ostringstream os;
    os << Trainer::iteration_engine(seed, r, s.iteration);
    std::string text = os.str();
    c.rng[r] = text;
  }
  c.counters["iteration"] = s.iteration;
  c.counters["episodes"] = s.episodes;
  c.counters["wall_ms"] = static_cast<int64_t>(s.wall_seconds * 1000.0);
  return c;
}

TrainerState trainer_state_from_checkpoint(const CheckpointData& c, const ParamLayout& layout,
                                           int baseline_window, const std::string& source) {
  check_model_shapes(c, shape_map(layout), source);
  TrainerState s;
  s.iteration = c.step;
  s.episodes = c.episodes;
  s.world_size = c.world_size;
  s.params = join_flat(c.model, layout, "/model", source);
  s.exp_avg = join_flat(c.optim_exp_avg, layout, "/optim", source);
  s.exp_avg_sq = join_flat(c.optim_exp_avg_sq, layout, "/optim", source);
  s.adam_step = c.optim_step;
  auto wall = c.counters.find("wall_ms");
  if (wall != c.counters.end()) s.wall_seconds = static_cast<double>(wall->second) / 1000.0;
  std::map<std::string, std::deque<std::vector<double>>> hist;
  for (const auto& [name, arr] : c.baselines) {
    const std::string suffix = "/returns";
    if (name.size() <= suffix.size() ||
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
      continue;
    const std::string graph = name.substr(0, name.size() - suffix.size());
    auto len_it = c.baselines.find(graph + "/lengths");
    if (len_it == c.baselines.end())
      throw InputError(source + ": /baselines/" + graph + "/lengths is missing");
    std::vector<double> flat = arr.to_doubles();
    std::vector<int64_t> lengths = len_it->second.to_int64s();
    size_t off = 0;
    auto& dq = hist[graph];
    for (int64_t len : lengths) {
      if (len < 0 || off + static_cast<size_t>(len) > flat.size())
        throw InputError(source + ": /baselines/" + graph + " lengths do not match its returns");
      dq.emplace_back(flat.begin() + off, flat.begin() + off + len);
      off += static_cast<size_t>(len);
    }
  }
  s.baselines = BaselineStore(baseline_window);
  s.baselines.set_history(std::move(hist));
  auto ref = c.schedules.find(kKlReference);
  if (ref != c.schedules.end()) {
    s.kl_reference = ref->second.to_floats();
    if (s.kl_reference.size() != layout.total())
      throw InputError(source + ": /schedules/kl_reference has " +
                       std::to_string(s.kl_reference.size()) + " values, the model " +
                       std::to_string(layout.total()));
  }
  auto lr = c.schedules.find(kLrSchedule);
  if (lr != c.schedules.end()) {
    const std::vector<double> v = lr->second.to_doubles();
    if (v.size() != 3 || !(v[0] >= 0) || !(v[2] >= v[0] + 1) || !(v[1] > 0) || v[2] > 9e15)
      throw InputError(source +
                       ": /schedules/lr: expected [from iteration, rate, to iteration] "
                       "with 0 <= from < to and rate > 0");
    s.lr_from_iteration = static_cast<int64_t>(v[0]);
    s.lr_from_value = v[1];
    s.lr_to_iteration = static_cast<int64_t>(v[2]);
  } else {
    // Written before the schedule was recorded: the linear schedule of the checkpoint's own
    // config, from iteration 0.
    const TrainConfig cfg = parse_train_config(c.config_yaml, source + " (/meta config_yaml)", {});
    s.lr_from_value = cfg.lr;
    s.lr_to_iteration = cfg.iterations;
  }
  return s;
}

std::vector<float> params_from_checkpoint(const CheckpointData& c, const ParamLayout& layout,
                                          const std::string& source) {
  ShapeMap expected = shape_map(layout);
  // Only /model matters here: compare shapes with a copy without the optimizer moments.
  CheckpointData model_only;
  model_only.model = c.model;
  check_model_shapes(model_only, expected, source);
  return join_flat(c.model, layout, "/model", source);
}

}  // namespace placeto
