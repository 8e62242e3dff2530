// CheckpointStore: a directory of published checkpoints,
//   ckpt_<step>.h5, ckpt_<step>.h5.sha256 (whole-file digest), LATEST ("ckpt_<step>.h5\n").
// publish() is atomic and durable: the HDF5 file is written to ckpt_<step>.h5.tmp, flushed
// and fsynced, renamed, its digest is published (tmp + fsync + rename + directory fsync), and
// only then LATEST is replaced the same way.  A crash (even SIGKILL) at any point leaves
// LATEST naming a complete, verified checkpoint; at worst a stray .tmp remains, which the
// next publish() removes.  The newest `keep_last` checkpoints (by step) are kept, plus the one
// LATEST names.
//
// load_latest() reads the checkpoint LATEST names; when it is damaged
// (CheckpointCorruptError) it logs a warning and falls back to the newest older intact one.
// Other errors (newer format version, missing dataset) propagate: an older file would hide
// them, not fix them.
//
// Thread safety: one writer per directory (rank 0 of a run); readers may run concurrently
// with the writer since they only ever see renamed, complete files.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/checkpoint/checkpoint_file.h"

namespace placeto {

class CheckpointStore {
 public:
  // REQUIRES: keep_last >= 1.  The directory is created on the first publish().
  explicit CheckpointStore(std::string dir, int keep_last = 3);

  const std::string& dir() const { return dir_; }
  std::string path_for_step(int64_t step) const;  // <dir>/ckpt_<step>.h5

  // Publishes `data` as ckpt_<data.step>.h5 (replacing one of the same step) and points
  // LATEST at it.  Returns the path.  Throws InputError / SystemError; on failure LATEST and
  // the earlier checkpoints are untouched.
  std::string publish(const CheckpointData& data);

  // nullopt when the directory holds no checkpoint (a fresh run).  Throws
  // CheckpointCorruptError listing every reason when checkpoints exist but none is intact.
  std::optional<CheckpointData> load_latest(std::string* path_out = nullptr) const;

  // Steps of the ckpt_<step>.h5 files present, ascending (intact or not).
  std::vector<int64_t> steps() const;

 private:
  void remove_stale_temporaries() const;
  void prune(int64_t keep_step) const;

  std::string dir_;
  int keep_last_;
};

// Sets created_utc to now and git_revision to this build's revision.
void stamp_checkpoint(CheckpointData* data);

// The checkpoint a user names on a command line (--checkpoint): a file, a run's checkpoints/
// directory or its LATEST file (then the newest intact checkpoint there).  `file`, when given,
// receives the file read.  InputError when a directory holds none.
CheckpointData read_checkpoint_any(const std::string& path, std::string* file = nullptr);

}  // namespace placeto
