#include "training/metrics_csv.h"

#include <algorithm>
#include <cstdarg>

#include "common/error.h"
#include "common/files.h"

namespace placeto {
namespace {

// Gives the rows of `path` the columns that `header` adds to the file's own header.
void upgrade(const std::string& path, const std::string& header,
             const std::vector<std::string>& fill) {
  const std::string text = read_file(path);
  const size_t eol = text.find('\n');
  const std::string old = text.substr(0, eol);
  if (old == header || header.rfind(old + ",", 0) != 0) return;
  const size_t added = static_cast<size_t>(std::count(header.begin(), header.end(), ',') -
                                           std::count(old.begin(), old.end(), ','));
  std::string pad;
  for (size_t k = 0; k < added; ++k) pad += "," + (k < fill.size() ? fill[k] : std::string());
  std::string out = header + "\n";
  for (size_t pos = eol == std::string::npos ? text.size() : eol + 1; pos < text.size();) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    if (end > pos) out += text.substr(pos, end - pos) + pad + "\n";
    pos = end + 1;
  }
  write_file_atomic(path, out);
}

}  // namespace

MetricsCsv::MetricsCsv(const std::string& path, const std::string& header, bool fresh_run,
                       const std::vector<std::string>& fill)
    : path_(path) {
  const bool exists = file_exists(path);
  if (exists && !fresh_run) upgrade(path, header, fill);
  const bool start = fresh_run || !exists;
  out_ = std::fopen(path.c_str(), start ? "w" : "a");
  if (!out_) throw SystemError(path + ": cannot open for writing");
  if (start) row(header);
}

MetricsCsv::~MetricsCsv() {
  if (out_) std::fclose(out_);
}

void MetricsCsv::row(const std::string& cells) {
  if (std::fprintf(out_, "%s\n", cells.c_str()) < 0 || std::fflush(out_) != 0)
    throw SystemError(path_ + ": cannot write a row");
}

void MetricsCsv::rowf(const char* format, ...) {
  char buf[2048];
  va_list ap;
  va_start(ap, format);
  const int n = std::vsnprintf(buf, sizeof buf, format, ap);
  va_end(ap);
  PLACETO_CHECK(n >= 0 && static_cast<size_t>(n) < sizeof buf);
  row(buf);
}

}  // namespace placeto
