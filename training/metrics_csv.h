// metrics.csv of a training run: one header, one row per iteration (or epoch), flushed as it
// is written so that a person can plot a run while it trains.  Written by rank 0 only.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

namespace placeto {

class MetricsCsv {
 public:
  // A fresh run (`fresh_run`) starts the file anew.  A resumed run appends; when the file's
  // header is a prefix of `header` (a run resumed by a newer version), its rows are first
  // given the new columns, each older row padded with `fill` (one cell per new column; empty
  // cells where `fill` is shorter).  SystemError when the file cannot be written.
  MetricsCsv(const std::string& path, const std::string& header, bool fresh_run,
             const std::vector<std::string>& fill = {});
  ~MetricsCsv();
  MetricsCsv(const MetricsCsv&) = delete;
  MetricsCsv& operator=(const MetricsCsv&) = delete;

  // Appends one row (without its newline) and flushes.
  void row(const std::string& cells);
  // printf-style convenience.
  void rowf(const char* format, ...) __attribute__((format(printf, 2, 3)));

 private:
  std::FILE* out_ = nullptr;
  std::string path_;
};

}  // namespace placeto
