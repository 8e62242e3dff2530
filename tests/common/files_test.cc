#include "common/files.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "common/error.h"

namespace placeto {
namespace {

TEST(Files, AtomicWriteReplacesAndLeavesNoTemporary) {
  std::string dir = testing::TempDir() + "/files_test_" + std::to_string(::getpid());
  make_directories(dir);
  std::string path = dir + "/a.txt";
  write_file_atomic(path, "one");
  write_file_atomic(path, "two");
  EXPECT_EQ(read_file(path), "two");
  EXPECT_FALSE(file_exists(path + ".tmp"));
  std::filesystem::remove_all(dir);
}

TEST(Files, MissingFileNamesPath) {
  try {
    read_file("/nonexistent/x.json");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/x.json"), std::string::npos);
  }
}

std::string refusal(const std::string& path, const std::vector<std::string>& inputs = {}) {
  try {
    check_output_path(path, inputs);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(accepted)";
}

TEST(Files, OutputPathsThatAreNotRegularFilesAreRefused) {
  std::string dir = testing::TempDir() + "/files_out_" + std::to_string(::getpid());
  make_directories(dir + "/sub");
  write_file_atomic(dir + "/in.json", "{}");
  ASSERT_EQ(::mkfifo((dir + "/fifo").c_str(), 0644), 0);
  ASSERT_EQ(::symlink("/dev/full", (dir + "/to_full").c_str()), 0);
  ASSERT_EQ(::symlink((dir + "/in.json").c_str(), (dir + "/to_in").c_str()), 0);
  EXPECT_EQ(refusal(dir + "/new.json"), "(accepted)");
  EXPECT_EQ(refusal(dir + "/in.json"), "(accepted)");
  EXPECT_EQ(refusal("/dev/full"),
            "--out /dev/full: refusing to write: the path is a character device (give the path "
            "of a regular file)");
  EXPECT_NE(refusal(dir + "/fifo").find("is a FIFO"), std::string::npos);
  EXPECT_NE(refusal(dir + "/sub").find("is a directory"), std::string::npos);
  EXPECT_NE(refusal(dir + "/to_full").find("symbolic link to a character device"),
            std::string::npos);
  EXPECT_NE(refusal(dir + "/missing/x.json").find("does not exist"), std::string::npos);
  EXPECT_NE(refusal(dir + "/in.json/x.json").find("not a directory"), std::string::npos);
  EXPECT_NE(refusal(dir + "/in.json", {dir + "/in.json"}).find("it is the input file"),
            std::string::npos);
  // The same file under another name is still the input.
  EXPECT_NE(refusal(dir + "/to_in", {dir + "/in.json"}).find("it is the input file"),
            std::string::npos);
  // write_file_atomic refuses too, and leaves the device alone.
  EXPECT_THROW(write_file_atomic("/dev/full", "x"), InputError);
  struct stat st;
  ASSERT_EQ(::stat("/dev/full", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
  // Through a link to a regular file: the file is replaced, the link kept.
  write_file_atomic(dir + "/to_in", "new");
  EXPECT_EQ(read_file(dir + "/in.json"), "new");
  ASSERT_EQ(::lstat((dir + "/to_in").c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));
  std::filesystem::remove_all(dir);
}

TEST(Files, FileLockRefusesASecondHolderAndNamesTheFirst) {
  std::string dir = testing::TempDir() + "/files_lock_" + std::to_string(::getpid());
  make_directories(dir);
  const std::string path = dir + "/run.lock";
  {
    FileLock first(path, "the run directory");
    // flock locks belong to the open file description: a second open in this process
    // conflicts just as another process would.
    try {
      FileLock second(path, "the run directory");
      FAIL() << "second lock taken";
    } catch (const InputError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find(path + ": the run directory is in use by another process (pid " +
                          std::to_string(::getpid())),
                std::string::npos)
          << what;
    }
  }
  FileLock again(path, "the run directory");  // released with the first
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace placeto
