#include "common/progress.h"

#include <unistd.h>

#include <cmath>

namespace placeto {

ProgressLine::ProgressLine(std::string label, int64_t total, std::string unit, double interval_s,
                           std::FILE* out)
    : label_(std::move(label)),
      total_(total),
      unit_(std::move(unit)),
      interval_s_(interval_s),
      out_(out),
      tty_(::isatty(::fileno(out)) != 0),
      start_(std::chrono::steady_clock::now()),
      last_draw_(start_) {}

ProgressLine::~ProgressLine() {
  if (!finished_ && done_ > 0) finish();
}

std::string ProgressLine::format_duration(double s) {
  if (!std::isfinite(s) || s < 0) return "--:--";
  long t = static_cast<long>(s + 0.5);
  char buf[32];
  if (t >= 3600)
    std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld", t / 3600, (t / 60) % 60, t % 60);
  else
    std::snprintf(buf, sizeof buf, "%02ld:%02ld", t / 60, t % 60);
  return buf;
}

void ProgressLine::update(int64_t done, const std::string& extra) {
  done_ = done;
  auto now = std::chrono::steady_clock::now();
  double since = std::chrono::duration<double>(now - last_draw_).count();
  double wait = tty_ ? 0.2 : interval_s_;
  if (since >= wait || done == total_) {
    last_draw_ = now;
    draw(false, extra);
  }
}

void ProgressLine::finish(const std::string& extra) {
  finished_ = true;
  // In logs the line of the last update() already says done == total; do not repeat it.
  if (!tty_ && drawn_done_ == done_ && extra.empty()) return;
  draw(true, extra);
}

void ProgressLine::draw(bool final_line, const std::string& extra) {
  double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  double rate = elapsed > 0 ? static_cast<double>(done_) / elapsed : 0;
  double eta = rate > 0 ? static_cast<double>(total_ - done_) / rate : -1;
  double pct = total_ > 0 ? 100.0 * static_cast<double>(done_) / static_cast<double>(total_) : 0;
  char buf[512];
  std::snprintf(buf, sizeof buf, "%s %lld/%lld (%.0f%%) %.2f %s/s elapsed %s ETA %s",
                label_.c_str(), static_cast<long long>(done_), static_cast<long long>(total_), pct,
                rate, unit_.c_str(), format_duration(elapsed).c_str(),
                final_line ? "00:00" : format_duration(eta).c_str());
  drawn_done_ = done_;
  std::string line = buf;
  if (!extra.empty()) line += "  " + extra;
  if (tty_)
    std::fprintf(out_, "\r\033[K%s%s", line.c_str(), final_line ? "\n" : "");
  else
    std::fprintf(out_, "%s\n", line.c_str());
  std::fflush(out_);
}

}  // namespace placeto
