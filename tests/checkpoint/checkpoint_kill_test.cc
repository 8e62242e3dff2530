// A checkpoint writer SIGKILLed at random moments never damages what was published before:
// after every kill, LATEST names an intact checkpoint at least as new as the last one the
// writer announced, and that announced one still reads back bit for bit.  Real processes:
// the writer is tests/checkpoint/ckpt_test_writer, killed with SIGKILL.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <random>
#include <sstream>

#include "common/checkpoint/checkpoint_store.h"
#include "tests/checkpoint/checkpoint_test_util.h"
#include "tests/checkpoint/test_checkpoint_data.h"

namespace placeto {
namespace {

constexpr int64_t kElems = 100000;  // ~1.2 MB per checkpoint
constexpr int kKills = 30;

using CheckpointKill = ScratchDirTest;

// Starts the writer, lets it run for `delay_us`, SIGKILLs it and returns what it printed.
std::string run_and_kill(const std::string& dir, int delay_us) {
  const std::string writer = std::string(PLACETO_BIN_DIR) + "/ckpt_test_writer";
  int fds[2];
  if (::pipe(fds) != 0) ADD_FAILURE() << "pipe failed";
  pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(fds[1], 1);
    ::close(fds[0]);
    ::close(fds[1]);
    const std::string elems = std::to_string(kElems);
    ::execl(writer.c_str(), writer.c_str(), "loop", dir.c_str(), elems.c_str(), nullptr);
    ::_exit(127);
  }
  ::close(fds[1]);
  ::usleep(static_cast<useconds_t>(delay_us));
  ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  std::string out;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(fds[0], buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
  ::close(fds[0]);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
      << "writer ended on its own (status " << status << "); output: " << out;
  return out;
}

int count_temporaries(const std::string& dir) {
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().extension() == ".tmp") ++n;
  return n;
}

TEST_F(CheckpointKill, SigkillDuringPublishNeverDamagesThePreviousCheckpoint) {
  CheckpointStore store(dir_, 3);
  std::mt19937 rng(20261202);
  std::uniform_int_distribution<int> delay_us(20000, 500000);
  int64_t announced = 0;
  int killed_mid_write = 0;
  for (int i = 0; i < kKills; ++i) {
    std::istringstream lines(run_and_kill(dir_, delay_us(rng)));
    for (int64_t step; lines >> step;) announced = std::max(announced, step);
    if (count_temporaries(dir_) > 0) ++killed_mid_write;
    if (announced == 0) continue;  // killed before its first publish
    std::string path;
    auto latest = store.load_latest(&path);
    ASSERT_TRUE(latest.has_value()) << "kill " << i;
    std::string pointer = read_file(dir_ + "/LATEST");
    EXPECT_EQ(path, dir_ + "/" + pointer.substr(0, pointer.size() - 1))
        << "fell back at kill " << i;
    EXPECT_GE(latest->step, announced) << "kill " << i;
    EXPECT_TRUE(*latest == make_test_checkpoint(latest->step, kElems)) << "kill " << i;
    EXPECT_TRUE(read_checkpoint_file(store.path_for_step(announced)) ==
                make_test_checkpoint(announced, kElems))
        << "kill " << i << ": announced step " << announced;
  }
  std::cerr << "published up to step " << announced << "; " << killed_mid_write << " of " << kKills
            << " kills left a temporary behind\n";
  EXPECT_GT(announced, 0);
  // Without kills landing inside a write this test would prove nothing.
  EXPECT_GT(killed_mid_write, 0);
}

}  // namespace
}  // namespace placeto
