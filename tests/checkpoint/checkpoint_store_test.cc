#include "common/checkpoint/checkpoint_store.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "common/checkpoint/checkpoint_compat.h"
#include "common/checkpoint/file_digest.h"
#include "tests/checkpoint/checkpoint_test_util.h"
#include "tests/checkpoint/test_checkpoint_data.h"

namespace placeto {
namespace {

using CheckpointStoreTest = ScratchDirTest;

TEST_F(CheckpointStoreTest, EmptyDirectoryHasNoCheckpoint) {
  CheckpointStore store(dir_ + "/none");
  EXPECT_FALSE(store.load_latest().has_value());
  EXPECT_TRUE(store.steps().empty());
}

TEST_F(CheckpointStoreTest, PublishWritesFileDigestAndLatest) {
  CheckpointStore store(dir_ + "/run");
  const std::string path = store.publish(make_test_checkpoint(4));
  EXPECT_EQ(path, dir_ + "/run/ckpt_4.h5");
  EXPECT_TRUE(file_exists(path + ".sha256"));
  EXPECT_FALSE(file_exists(path + ".tmp"));
  EXPECT_EQ(read_file(dir_ + "/run/LATEST"), "ckpt_4.h5\n");
  std::string loaded;
  auto d = store.load_latest(&loaded);
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(loaded, path);
  EXPECT_TRUE(*d == make_test_checkpoint(4));
}

TEST_F(CheckpointStoreTest, KeepsTheLastK) {
  CheckpointStore store(dir_, 2);
  for (int s = 1; s <= 5; ++s) store.publish(make_test_checkpoint(s));
  EXPECT_EQ(store.steps(), (std::vector<int64_t>{4, 5}));
  EXPECT_FALSE(file_exists(dir_ + "/ckpt_3.h5.sha256"));
  EXPECT_EQ(store.load_latest()->step, 5);
}

TEST_F(CheckpointStoreTest, LatestPointsAtAnOlderStepWhenRepublished) {
  CheckpointStore store(dir_, 2);
  for (int s : {1, 2, 3}) store.publish(make_test_checkpoint(s));
  store.publish(make_test_checkpoint(1));  // e.g. a run restarted from an older checkpoint
  EXPECT_EQ(store.load_latest()->step, 1);
  EXPECT_EQ(store.steps(), (std::vector<int64_t>{1, 2, 3}));
}

TEST_F(CheckpointStoreTest, FallsBackWhenTheNewestIsDamaged) {
  CheckpointStore store(dir_, 5);
  for (int s = 1; s <= 3; ++s) store.publish(make_test_checkpoint(s));
  flip_bit(dir_ + "/ckpt_3.h5", 200);
  std::string loaded;
  auto d = store.load_latest(&loaded);
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->step, 2);
  EXPECT_EQ(loaded, dir_ + "/ckpt_2.h5");
  EXPECT_TRUE(*d == make_test_checkpoint(2));
}

TEST_F(CheckpointStoreTest, FallsBackWhenTheNewestIsTruncatedOrUnverifiable) {
  CheckpointStore store(dir_, 5);
  for (int s = 1; s <= 3; ++s) store.publish(make_test_checkpoint(s));
  std::filesystem::resize_file(dir_ + "/ckpt_3.h5", 1000);
  std::filesystem::remove(dir_ + "/ckpt_2.h5.sha256");
  EXPECT_EQ(store.load_latest()->step, 1);
}

TEST_F(CheckpointStoreTest, FallsBackWhenLatestNamesAVanishedFile) {
  CheckpointStore store(dir_, 5);
  for (int s = 1; s <= 2; ++s) store.publish(make_test_checkpoint(s));
  std::filesystem::remove(dir_ + "/ckpt_2.h5");
  EXPECT_EQ(store.load_latest()->step, 1);
}

TEST_F(CheckpointStoreTest, NoIntactCheckpointListsEveryReason) {
  CheckpointStore store(dir_, 5);
  for (int s = 1; s <= 2; ++s) store.publish(make_test_checkpoint(s));
  flip_bit(dir_ + "/ckpt_1.h5", 100);
  flip_bit(dir_ + "/ckpt_2.h5", 100);
  expect_throw_with<CheckpointCorruptError>([&] { store.load_latest(); },
                                            {"no intact checkpoint", "ckpt_1.h5", "ckpt_2.h5"});
}

TEST_F(CheckpointStoreTest, ANewerFormatVersionDoesNotFallBack) {
  CheckpointStore store(dir_);
  store.publish(make_test_checkpoint(1));
  CheckpointData d = make_test_checkpoint(2);
  d.format_version = kCheckpointFormatVersion + 1;
  store.publish(d);
  expect_throw_with<InputError>([&] { store.load_latest(); }, {"ckpt_2.h5", "newer"});
}

TEST_F(CheckpointStoreTest, MissingLatestUsesTheNewest) {
  CheckpointStore store(dir_);
  for (int s = 1; s <= 2; ++s) store.publish(make_test_checkpoint(s));
  std::filesystem::remove(dir_ + "/LATEST");
  EXPECT_EQ(store.load_latest()->step, 2);
}

TEST_F(CheckpointStoreTest, AFailedPublishLeavesTheStoreAsItWas) {
  CheckpointStore store(dir_);
  store.publish(make_test_checkpoint(1));
  CheckpointData bad = make_test_checkpoint(2);
  bad.model["encoder"] = NamedArray::from_floats({1}, {0.0f});  // also the group of encoder/...
  expect_throw_with<InputError>([&] { store.publish(bad); }, {"\"encoder\" is also the group"});
  EXPECT_EQ(read_file(dir_ + "/LATEST"), "ckpt_1.h5\n");
  EXPECT_FALSE(file_exists(dir_ + "/ckpt_2.h5.tmp"));
  EXPECT_FALSE(file_exists(dir_ + "/ckpt_2.h5"));
  EXPECT_EQ(store.load_latest()->step, 1);
}

TEST_F(CheckpointStoreTest, PublishRemovesStaleTemporaries) {
  CheckpointStore store(dir_);
  write_file_atomic(dir_ + "/ckpt_9.h5.tmp", "half a file");
  write_file_atomic(dir_ + "/ckpt_9.h5.sha256.tmp", "half a digest");
  write_file_atomic(dir_ + "/LATEST.tmp", "half a pointer");
  write_file_atomic(dir_ + "/other.tmp", "not ours");
  store.publish(make_test_checkpoint(1));
  EXPECT_FALSE(file_exists(dir_ + "/ckpt_9.h5.tmp"));
  EXPECT_FALSE(file_exists(dir_ + "/ckpt_9.h5.sha256.tmp"));
  EXPECT_FALSE(file_exists(dir_ + "/LATEST.tmp"));
  EXPECT_TRUE(file_exists(dir_ + "/other.tmp"));
  EXPECT_EQ(store.steps(), (std::vector<int64_t>{1}));
}

TEST_F(CheckpointStoreTest, StampSetsTimeAndRevision) {
  CheckpointData d;
  stamp_checkpoint(&d);
  EXPECT_EQ(d.created_utc.size(), 20u);
  EXPECT_EQ(d.created_utc.back(), 'Z');
  EXPECT_FALSE(d.git_revision.empty());
}

TEST(CheckpointCompat, ModelShapesNameEveryProblem) {
  const CheckpointData d = make_test_checkpoint(1);
  ShapeMap expected;
  for (const auto& [name, a] : d.model) expected[name] = a.shape;
  EXPECT_NO_THROW(check_model_shapes(d, expected, "ckpt_1.h5"));
  expected["encoder/layer.0/weight"] = {4, 4};
  expected.erase("empty");
  expected["decoder/w"] = {2};
  expect_throw_with<InputError>(
      [&] { check_model_shapes(d, expected, "ckpt_1.h5"); },
      {"ckpt_1.h5", "encoder/layer.0/weight: checkpoint [3, 4], model [4, 4]",
       "decoder/w: missing from the checkpoint", "empty: in the checkpoint ([0, 3]) but not",
       "optim empty/exp_avg: no such model parameter"});
}

TEST(CheckpointCompat, ConfigMismatchNamesTheKeys) {
  const std::string ckpt = "model:\n  hidden: 64\n  layers: [1, 2]\nrun:\n  dir: /a\nseed: 1\n";
  const std::string same = "seed: 1\nmodel: {layers: [1, 2], hidden: 64}\nrun: {dir: /a}\n";
  EXPECT_TRUE(config_differences(ckpt, same, {}).empty());
  const std::string cur = "model:\n  hidden: 128\n  layers: [1, 3]\nrun:\n  dir: /b\nlr: 0.1\n";
  expect_throw_with<InputError>(
      [&] { check_config_matches(ckpt, cur, {"run"}, "run.yaml"); },
      {"run.yaml", "model.hidden (checkpoint: 64, current: 128)",
       "model.layers[1] (checkpoint: 2, current: 3)", "seed (checkpoint: 1, current: <absent>)",
       "lr (checkpoint: <absent>, current: 0.1)"});
  EXPECT_EQ(config_differences(ckpt, cur, {"run", "model", "seed", "lr"}).size(), 0u);
  EXPECT_EQ(config_differences(ckpt, cur, {}).size(), 5u);
}

}  // namespace
}  // namespace placeto
