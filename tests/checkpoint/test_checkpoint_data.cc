#include "tests/checkpoint/test_checkpoint_data.h"

#include <cstring>
#include <limits>

namespace placeto {
namespace {

float float_from_bits(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

}  // namespace

CheckpointData make_test_checkpoint(int64_t step, int64_t big_elems) {
  CheckpointData d;
  d.step = step;
  d.episodes = 1000 * step + 17;
  d.world_size = 4;
  d.created_utc = "2026-12-02T09:00:00Z";
  d.git_revision = "abc123def456";
  d.config_yaml =
      "model:\n  hidden: 64\n  name: \"placeto \xc3\xa9t\xc3\xa9\"\nlearner:\n  lr: 0.001\n";
  const float s = static_cast<float>(step);
  std::vector<float> w(12);
  for (int i = 0; i < 12; ++i) w[i] = i * 0.5f - 1.0f + s;  // mirrored in read_with_h5py.py
  d.model["encoder/layer.0/weight"] = NamedArray::from_floats({3, 4}, w);
  d.model["encoder/layer.0/bias"] = NamedArray::from_floats(
      {5}, {float_from_bits(0x7fc00123u), -0.0f, std::numeric_limits<float>::denorm_min(),
            std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::max()});
  d.model["head.scale"] = NamedArray::from_doubles({}, {3.25 + step});
  d.model["empty"] = NamedArray::from_floats({0, 3}, {});
  if (big_elems > 0) {
    std::vector<float> big(static_cast<size_t>(big_elems));
    for (int64_t i = 0; i < big_elems; ++i) big[i] = static_cast<float>(i % 1000) * 1e-3f + s;
    d.model["big/w"] = NamedArray::from_floats({big_elems}, big);
  }
  for (const auto& [name, a] : d.model) {
    NamedArray m = a, v = a;
    for (auto& b : m.bytes) b ^= 0x5a;
    for (auto& b : v.bytes) b ^= 0x21;
    d.optim_exp_avg[name] = m;
    d.optim_exp_avg_sq[name] = v;
  }
  d.optim_step = step * 3;
  d.schedules["entropy_coef"] = NamedArray::from_doubles({2}, {0.01, 1e-300});
  d.baselines["graph.ptb/moving_avg"] = NamedArray::from_doubles({3}, {1.5, -2.5, 1e10});
  d.baselines["seen"] = NamedArray::from_int64s(
      {2, 2}, {std::numeric_limits<int64_t>::min(), -1, 0, std::numeric_limits<int64_t>::max()});
  d.baselines["mask"] = NamedArray::from_u8s({4}, {0, 1, 254, 255});
  static const char kEngine[] = "\x00\x01\xff mt19937 state";
  d.rng[0] = std::string(kEngine, sizeof kEngine - 1);
  d.rng[3] = "rank three engine bytes " + std::to_string(step);
  d.rng[12] = "";
  d.counters["episodes_since_eval"] = 7 + step;
  d.counters["negative"] = -42;
  d.counters["max"] = std::numeric_limits<int64_t>::max();
  return d;
}

}  // namespace placeto
