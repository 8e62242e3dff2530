// Shared helpers of the checkpoint tests: a scratch directory per test and an assertion that
// a call throws a given error type whose message contains given fragments.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <string>

#include "common/files.h"

namespace placeto {

class ScratchDirTest : public testing::Test {
 protected:
  void SetUp() override {
    const auto* info = testing::UnitTest::GetInstance()->current_test_info();
    dir_ = testing::TempDir() + "/ckpt_" + info->test_suite_name() + "_" + info->name() + "_" +
           std::to_string(::getpid());
    std::filesystem::remove_all(dir_);
    make_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string dir_;
};

template <typename E>
void expect_throw_with(const std::function<void()>& fn,
                       std::initializer_list<std::string> fragments) {
  try {
    fn();
    ADD_FAILURE() << "no exception";
  } catch (const E& e) {
    for (const auto& f : fragments)
      EXPECT_NE(std::string(e.what()).find(f), std::string::npos)
          << "message lacks \"" << f << "\": " << e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "wrong exception type: " << e.what();
  }
}

// Flips one bit of the byte at `offset` in place.
inline void flip_bit(const std::string& path, std::streamoff offset, int bit = 3) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  ASSERT_TRUE(f.good()) << path;
  f.seekg(offset);
  char c = 0;
  f.read(&c, 1);
  c = static_cast<char>(c ^ (1 << bit));
  f.seekp(offset);
  f.write(&c, 1);
}

}  // namespace placeto
