#include "common/checkpoint/checkpoint_store.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "common/checkpoint/file_digest.h"
#include "common/files.h"
#include "placeto/config.h"

namespace fs = std::filesystem;

namespace placeto {
namespace {

constexpr const char* kLatest = "LATEST";

// Parses "ckpt_<digits>.h5" (the whole name); false for anything else.
bool parse_checkpoint_name(const std::string& name, int64_t* step) {
  const std::string prefix = "ckpt_", suffix = ".h5";
  if (name.size() <= prefix.size() + suffix.size() || name.rfind(prefix, 0) != 0 ||
      name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
    return false;
  const std::string digits =
      name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
  if (digits.size() > 18 || digits.find_first_not_of("0123456789") != std::string::npos)
    return false;
  *step = std::stoll(digits);
  return true;
}

std::string checkpoint_name(int64_t step) { return "ckpt_" + std::to_string(step) + ".h5"; }

void remove_file(const std::string& path) {
  std::error_code ec;
  fs::remove(path, ec);
  if (ec) spdlog::warn("checkpoint store: cannot remove {}: {}", path, ec.message());
}

}  // namespace

CheckpointStore::CheckpointStore(std::string dir, int keep_last)
    : dir_(std::move(dir)), keep_last_(keep_last) {
  PLACETO_CHECK_GE(keep_last_, 1);
}

std::string CheckpointStore::path_for_step(int64_t step) const {
  return (fs::path(dir_) / checkpoint_name(step)).string();
}

std::vector<int64_t> CheckpointStore::steps() const {
  std::vector<int64_t> out;
  std::error_code ec;
  fs::directory_iterator it(dir_, ec);
  if (ec) return out;  // no directory yet: no checkpoints
  for (const auto& entry : it) {
    int64_t step = 0;
    if (parse_checkpoint_name(entry.path().filename().string(), &step)) out.push_back(step);
  }
  std::sort(out.begin(), out.end());
  return out;
}

void CheckpointStore::remove_stale_temporaries() const {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir_, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.size() <= 4 || name.compare(name.size() - 4, 4, ".tmp") != 0) continue;
    std::string stem = name.substr(0, name.size() - 4);
    const std::string digest_suffix = ".sha256";
    if (stem.size() > digest_suffix.size() &&
        stem.compare(stem.size() - digest_suffix.size(), digest_suffix.size(), digest_suffix) == 0)
      stem.resize(stem.size() - digest_suffix.size());
    int64_t step = 0;
    if (stem == kLatest || parse_checkpoint_name(stem, &step)) remove_file(entry.path().string());
  }
}

void CheckpointStore::prune(int64_t keep_step) const {
  std::vector<int64_t> all = steps();
  const size_t keep = static_cast<size_t>(keep_last_);
  if (all.size() <= keep) return;
  for (size_t i = 0; i + keep < all.size(); ++i) {
    if (all[i] == keep_step) continue;
    const std::string path = path_for_step(all[i]);
    remove_file(path);
    remove_file(digest_path(path));
  }
}

std::string CheckpointStore::publish(const CheckpointData& data) {
  make_directories(dir_);
  remove_stale_temporaries();
  const std::string path = path_for_step(data.step);
  const std::string tmp = path + ".tmp";
  try {
    write_checkpoint_hdf5(tmp, data);  // flushed and fsynced
  } catch (...) {
    std::remove(tmp.c_str());
    throw;
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    std::remove(tmp.c_str());
    throw SystemError(path + ": rename from " + tmp + " failed: " + std::strerror(err));
  }
  // write_file_atomic fsyncs the directory, which also makes the rename above durable.
  write_digest_file(path);
  write_file_atomic((fs::path(dir_) / kLatest).string(), checkpoint_name(data.step) + "\n");
  prune(data.step);
  return path;
}

std::optional<CheckpointData> CheckpointStore::load_latest(std::string* path_out) const {
  const std::vector<int64_t> all = steps();
  const std::string latest_path = (fs::path(dir_) / kLatest).string();
  int64_t target = -1;
  if (file_exists(latest_path)) {
    std::string text = read_file(latest_path);
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
    // LATEST is only ever written as "ckpt_<step>.h5" (atomically); anything else, and above
    // all a path to elsewhere, is refused rather than followed or silently replaced.
    if (!parse_checkpoint_name(text, &target))
      throw InputError(latest_path + ": names " + quoted_name(text) +
                       ", which is not a checkpoint of this directory (expected ckpt_<step>.h5); "
                       "remove LATEST to resume from the newest intact checkpoint");
  } else if (!all.empty()) {
    spdlog::warn("{}: missing; using the newest checkpoint", latest_path);
  }
  if (target < 0) {
    if (all.empty()) return std::nullopt;
    target = all.back();
  }
  std::vector<int64_t> candidates{target};
  for (auto it = all.rbegin(); it != all.rend(); ++it)
    if (*it < target) candidates.push_back(*it);

  std::string reasons;
  for (int64_t step : candidates) {
    const std::string path = path_for_step(step);
    try {
      CheckpointData d = read_checkpoint_file(path);
      if (step != target)
        spdlog::warn(
            "checkpoint store {}: newest checkpoint ckpt_{}.h5 is damaged; falling back "
            "to {} ({})",
            dir_, target, path, reasons);
      if (path_out) *path_out = path;
      return d;
    } catch (const CheckpointCorruptError& e) {
      reasons += (reasons.empty() ? "" : "; ") + std::string(e.what());
    } catch (const InputError& e) {
      // A file that vanished (pruned by a concurrent writer, or LATEST naming a lost file)
      // is as unusable as a damaged one; anything else about an intact file propagates.
      if (file_exists(path)) throw;
      reasons += (reasons.empty() ? "" : "; ") + std::string(e.what());
    }
  }
  throw CheckpointCorruptError(dir_ + ": no intact checkpoint: " + reasons);
}

void stamp_checkpoint(CheckpointData* data) {
  data->created_utc = utc_timestamp_now();
  data->git_revision = PLACETO_GIT_REVISION;
}

CheckpointData read_checkpoint_any(const std::string& path, std::string* file) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (file) *file = path;
  const bool dir = fs::is_directory(path, ec);
  if (dir || fs::path(path).filename() == "LATEST") {
    std::string d = dir ? path : fs::path(path).parent_path().string();
    if (d.empty()) d = ".";
    std::optional<CheckpointData> data = CheckpointStore(d).load_latest(file);
    if (!data) throw InputError(path + ": no checkpoint found");
    return std::move(*data);
  }
  return read_checkpoint_file(path);
}

}  // namespace placeto
