// Replays the fuzz corpora (tests/fuzz/corpus/<target>/) and the inputs that once crashed a
// target (tests/fuzz/regressions/<target>/) through the fuzzed entry points, so that every
// build -- g++ included, with or without sanitizers -- checks that none of them crashes or
// throws anything but a placeto::Error.  The files are the test data; see docs/RELIABILITY.md.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "common/checkpoint/checkpoint_file.h"
#include "common/checkpoint/file_digest.h"
#include "common/error.h"
#include "common/files.h"
#include "tests/fuzz/fuzz_targets.h"

namespace placeto::fuzz {
namespace {

namespace fs = std::filesystem;
using Target = std::function<void(const uint8_t*, size_t)>;

std::vector<fs::path> inputs_of(const std::string& kind, const std::string& target) {
  std::vector<fs::path> files;
  const fs::path dir = fs::path(PLACETO_FUZZ_DIR) / kind / target;
  if (!fs::is_directory(dir)) return files;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_regular_file()) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

// Returns how many inputs ran; a crash ends the test binary, a foreign exception fails it.
size_t replay(const std::string& kind, const std::string& target, const Target& fn) {
  size_t n = 0;
  for (const fs::path& p : inputs_of(kind, target)) {
    const std::string bytes = read_file(p.string());
    SCOPED_TRACE(p.string());
    EXPECT_NO_THROW(fn(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
    ++n;
  }
  return n;
}

struct Case {
  const char* name;
  Target fn;
};

class FuzzReplay : public ::testing::TestWithParam<Case> {};

TEST_P(FuzzReplay, CorpusIsRefusedOrAcceptedWithoutCrashing) {
  // Every target has a committed, non-empty corpus.
  EXPECT_GT(replay("corpus", GetParam().name, GetParam().fn), 0u);
}

TEST_P(FuzzReplay, FormerCrashesAreRefusedOrAccepted) {
  (void)replay("regressions", GetParam().name, GetParam().fn);
}

INSTANTIATE_TEST_SUITE_P(AllTargets, FuzzReplay,
                         ::testing::Values(Case{"fuzz_graph", fuzz_graph},
                                           Case{"fuzz_cluster_yaml", fuzz_cluster_yaml},
                                           Case{"fuzz_onnx", fuzz_onnx},
                                           Case{"fuzz_checkpoint", fuzz_checkpoint},
                                           Case{"fuzz_checkpoint_hdf5", fuzz_checkpoint_hdf5},
                                           Case{"fuzz_train_config", fuzz_train_config}),
                         [](const auto& info) { return std::string(info.param.name); });

// Files on which Debian's libhdf5 itself crashes once they are past the digest
// (tests/fuzz/known_crashes/fuzz_checkpoint_hdf5/, docs/RELIABILITY.md).  They cannot be
// replayed through libhdf5; what must hold is that the whole-file digest keeps them away from
// it: with the fixture's digest beside them, or none, reading refuses them first.
TEST(FuzzKnownCrashes, Libhdf5CrashesAreRefusedByTheDigest) {
  const auto files = inputs_of("known_crashes", "fuzz_checkpoint_hdf5");
  ASSERT_FALSE(files.empty());
  const fs::path dir = fs::path(::testing::TempDir()) / "fuzz_known_crashes";
  fs::create_directories(dir);
  const std::string path = (dir / "ckpt.h5").string();
  for (const fs::path& p : files) {
    SCOPED_TRACE(p.string());
    const std::string bytes = read_file(p.string());
    write_file_atomic(path, bytes);
    fs::remove(digest_path(path));
    EXPECT_THROW(read_checkpoint_file(path), CheckpointCorruptError);
    // A digest of other bytes (here: of the file with its last byte dropped).
    const std::string other = sha256_hex(bytes.data(), bytes.size() - 1);
    write_file_atomic(digest_path(path), other + "  ckpt.h5\n");
    EXPECT_THROW(read_checkpoint_file(path), CheckpointCorruptError);
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace placeto::fuzz
