#include "common/checkpoint/checkpoint_file.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>

#include "common/checkpoint/file_digest.h"
#include "common/checkpoint/hdf5_file.h"
#include "tests/checkpoint/checkpoint_test_util.h"
#include "tests/checkpoint/test_checkpoint_data.h"

namespace placeto {
namespace {

class CheckpointFile : public ScratchDirTest {
 protected:
  std::string written(const CheckpointData& d) {
    const std::string path = dir_ + "/ckpt.h5";
    write_checkpoint_file(path, d);
    return path;
  }
};

TEST_F(CheckpointFile, RoundTripIsBitForBit) {
  const CheckpointData d = make_test_checkpoint(5, 1000);
  const CheckpointData r = read_checkpoint_file(written(d));
  EXPECT_TRUE(r == d);
  // Field by field too, so that a failure says which one.
  EXPECT_EQ(r.step, 5);
  EXPECT_EQ(r.episodes, d.episodes);
  EXPECT_EQ(r.world_size, 4);
  EXPECT_EQ(r.created_utc, d.created_utc);
  EXPECT_EQ(r.git_revision, d.git_revision);
  EXPECT_EQ(r.config_yaml, d.config_yaml);
  EXPECT_EQ(r.model, d.model);
  EXPECT_EQ(r.optim_exp_avg, d.optim_exp_avg);
  EXPECT_EQ(r.optim_exp_avg_sq, d.optim_exp_avg_sq);
  EXPECT_EQ(r.optim_step, 15);
  EXPECT_EQ(r.schedules, d.schedules);
  EXPECT_EQ(r.baselines, d.baselines);
  EXPECT_EQ(r.rng, d.rng);
  EXPECT_EQ(r.counters, d.counters);
  // The NaN payload and the sign of -0.0 survive (bytes, not values, are compared above).
  const std::vector<float> bias = r.model.at("encoder/layer.0/bias").to_floats();
  uint32_t bits = 0;
  std::memcpy(&bits, &bias[0], 4);
  EXPECT_EQ(bits, 0x7fc00123u);
  EXPECT_TRUE(std::signbit(bias[1]));
  EXPECT_TRUE(r.model.at("head.scale").shape.empty());
  EXPECT_EQ(r.model.at("empty").shape, (std::vector<int64_t>{0, 3}));
  EXPECT_EQ(r.rng.at(0).size(), 17u);
}

TEST_F(CheckpointFile, DigestFileIsSha256sumFormat) {
  const std::string path = written(make_test_checkpoint(1));
  const std::string line = read_file(digest_path(path));
  const std::string bytes = read_file(path);
  EXPECT_EQ(line, sha256_hex(bytes.data(), bytes.size()) + "  ckpt.h5\n");
}

TEST_F(CheckpointFile, TruncatedFileIsRefusedByTheDigest) {
  const std::string path = written(make_test_checkpoint(1));
  std::filesystem::resize_file(path, std::filesystem::file_size(path) / 2);
  expect_throw_with<CheckpointCorruptError>([&] { read_checkpoint_file(path); },
                                            {path, "SHA-256 mismatch", "truncated or damaged"});
}

TEST_F(CheckpointFile, BitFlipIsRefusedByTheDigest) {
  const std::string path = written(make_test_checkpoint(1));
  flip_bit(path, static_cast<std::streamoff>(std::filesystem::file_size(path) / 2));
  expect_throw_with<CheckpointCorruptError>([&] { read_checkpoint_file(path); },
                                            {path, "SHA-256 mismatch"});
}

TEST_F(CheckpointFile, MissingDigestIsRefused) {
  const std::string path = written(make_test_checkpoint(1));
  std::filesystem::remove(digest_path(path));
  expect_throw_with<CheckpointCorruptError>([&] { read_checkpoint_file(path); },
                                            {path + ".sha256", "missing"});
}

TEST_F(CheckpointFile, MissingFileIsAnInputErrorNotDamage) {
  const std::string path = dir_ + "/nope.h5";
  try {
    read_checkpoint_file(path);
    FAIL() << "no exception";
  } catch (const CheckpointCorruptError& e) {
    FAIL() << "a missing file is not damage: " << e.what();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(path + ": checkpoint file does not exist"),
              std::string::npos)
        << e.what();
  }
}

TEST_F(CheckpointFile, NewerFormatVersionIsRefused) {
  CheckpointData d = make_test_checkpoint(1);
  d.format_version = kCheckpointFormatVersion + 1;
  const std::string path = written(d);
  expect_throw_with<InputError>(
      [&] { read_checkpoint_file(path); },
      {path, "format_version 2 is newer than this build reads (1)", "newer placeto"});
  try {
    read_checkpoint_file(path);
  } catch (const CheckpointCorruptError&) {
    ADD_FAILURE() << "a newer version is not damage";
  } catch (const InputError&) {
  }
}

TEST_F(CheckpointFile, OlderFormatVersionIsRefused) {
  CheckpointData d = make_test_checkpoint(1);
  d.format_version = 0;
  const std::string path = written(d);
  expect_throw_with<InputError>([&] { read_checkpoint_file(path); },
                                {"format_version 0 is not supported"});
}

// A file damaged before its digest was taken (e.g. bad RAM while writing) passes the digest;
// the per-dataset checksum still catches it and names the dataset.
TEST_F(CheckpointFile, DatasetChecksumCatchesDamageBehindAValidDigest) {
  const std::string path = written(make_test_checkpoint(1, 4096));
  haddr_t offset = HADDR_UNDEF;
  {
    hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    ASSERT_GE(f, 0);
    hid_t ds = H5Dopen2(f, "/model/big/w", H5P_DEFAULT);
    ASSERT_GE(ds, 0);
    offset = H5Dget_offset(ds);
    H5Dclose(ds);
    H5Fclose(f);
  }
  ASSERT_NE(offset, HADDR_UNDEF);
  flip_bit(path, static_cast<std::streamoff>(offset + 100));
  write_digest_file(path);
  expect_throw_with<CheckpointCorruptError>([&] { read_checkpoint_file(path); },
                                            {path, "/model/big/w", "checksum mismatch"});
}

TEST_F(CheckpointFile, MissingGroupIsNamed) {
  const std::string path = written(make_test_checkpoint(1));
  {
    hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
    ASSERT_GE(f, 0);
    ASSERT_GE(H5Ldelete(f, "/optim", H5P_DEFAULT), 0);
    H5Fclose(f);
  }
  write_digest_file(path);
  expect_throw_with<InputError>([&] { read_checkpoint_file(path); }, {path, "/optim", "missing"});
}

TEST_F(CheckpointFile, MissingMetaAttributeIsNamed) {
  const std::string path = written(make_test_checkpoint(1));
  {
    hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
    ASSERT_GE(f, 0);
    ASSERT_GE(H5Adelete_by_name(f, "/meta", "episodes", H5P_DEFAULT), 0);
    H5Fclose(f);
  }
  write_digest_file(path);
  expect_throw_with<InputError>([&] { read_checkpoint_file(path); },
                                {path, "/meta", "attribute episodes is missing"});
}

TEST_F(CheckpointFile, NonHdf5FileWithAValidDigestIsRefusedByHdf5) {
  const std::string path = dir_ + "/fake.h5";
  write_file_atomic(path, "this is not an HDF5 file");
  write_digest_file(path);
  expect_throw_with<CheckpointCorruptError>([&] { read_checkpoint_file(path); },
                                            {path, "HDF5 cannot open"});
}

TEST_F(CheckpointFile, InvalidNamesAreRejectedBeforeWriting) {
  const std::string path = dir_ + "/bad.h5";
  CheckpointData d;
  d.model["a"] = NamedArray::from_floats({1}, {1.0f});
  d.model["a/b"] = NamedArray::from_floats({1}, {1.0f});
  expect_throw_with<InputError>([&] { write_checkpoint_file(path, d); },
                                {"/model", "\"a\" is also the group of \"a/b\""});
  EXPECT_FALSE(file_exists(path));
  for (const std::string bad : {"", "/x", "x/", "x//y", "x/../y"}) {
    CheckpointData e;
    e.baselines[bad] = NamedArray::from_floats({}, {0.0f});
    expect_throw_with<InputError>([&] { write_checkpoint_file(path, e); }, {"/baselines"});
  }
  CheckpointData c;
  c.counters["a/b"] = 1;
  expect_throw_with<InputError>([&] { write_checkpoint_file(path, c); }, {"/counters"});
}

TEST_F(CheckpointFile, ArrayWhoseBytesDoNotFitItsShapeIsRejected) {
  CheckpointData d;
  NamedArray a = NamedArray::from_floats({2, 2}, {1, 2, 3, 4});
  a.bytes.pop_back();
  d.model["w"] = a;
  expect_throw_with<InputError>([&] { write_checkpoint_file(dir_ + "/x.h5", d); },
                                {"/model/w", "15 bytes do not fit shape [2, 2] of f32"});
}

TEST(NamedArray, ConvertersCheckTheDtype) {
  NamedArray a = NamedArray::from_int64s({2}, {1, -1});
  EXPECT_EQ(a.to_int64s(), (std::vector<int64_t>{1, -1}));
  expect_throw_with<InputError>([&] { a.to_floats(); }, {"dtype i64, expected f32"});
}

}  // namespace
}  // namespace placeto
