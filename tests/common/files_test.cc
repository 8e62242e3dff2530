#include "common/files.h"

#include <gtest/gtest.h>
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

}  // namespace
}  // namespace placeto
