// A progress line for work a person watches: done/total, rate and ETA.  On a terminal it
// redraws one line; otherwise (logs, CI) it prints a line at most every `interval_s`.
// Not thread-safe: one owner updates it.
#pragma once

#include <chrono>
#include <cstdio>
#include <string>

namespace placeto {

class ProgressLine {
 public:
  // `unit` names what is counted ("it", "graphs", "episodes").
  ProgressLine(std::string label, int64_t total, std::string unit = "it", double interval_s = 2.0,
               std::FILE* out = stderr);
  ~ProgressLine();
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  // Sets the number done; `extra` is appended (e.g. "best 1234 us").
  void update(int64_t done, const std::string& extra = "");
  void finish(const std::string& extra = "");
  static std::string format_duration(double seconds);

 private:
  void draw(bool final_line, const std::string& extra);
  std::string label_;
  int64_t total_;
  std::string unit_;
  double interval_s_;
  std::FILE* out_;
  bool tty_;
  bool finished_ = false;
  int64_t done_ = 0;
  int64_t drawn_done_ = -1;
  std::chrono::steady_clock::time_point start_, last_draw_;
};

}  // namespace placeto
