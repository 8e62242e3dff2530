// The checkpoint format: one HDF5 file holding everything a run needs to continue exactly --
// model parameters, Adam moments, schedules, baselines, per-rank RNG states and counters --
// as named arrays and attributes (layout in docs/CHECKPOINT.md; readable with h5py).  It is
// torch-free: the learner converts tensors to and from NamedArray.
//
// Integrity has two layers.  A whole-file SHA-256 lives beside the file ("<file>.sha256") and
// is checked before libhdf5 sees a byte (file_digest.h); each dataset also carries a "sha256"
// attribute over its data, checked on read.  Damage throws CheckpointCorruptError; a newer
// format version, a missing dataset or a malformed name throws InputError.
//
// Publication (tmp file, fsync, rename, LATEST, keep-last-K) is CheckpointStore's job; the
// functions here write and read one file.
//
// Thread safety: free functions on value types; one file must not be written by two callers.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "common/checkpoint/checkpoint_error.h"
#include "common/checkpoint/named_array.h"

namespace placeto {

// Version 1: the layout of docs/CHECKPOINT.md.  Readers refuse other versions.
inline constexpr int kCheckpointFormatVersion = 1;

struct CheckpointData {
  int format_version = kCheckpointFormatVersion;
  int64_t step = 0;          // learner updates done
  int64_t episodes = 0;      // episodes consumed
  int world_size = 1;        // ranks of the run that wrote it
  std::string created_utc;   // ISO 8601, e.g. "2026-12-02T09:13:24Z"
  std::string git_revision;  // of the build that wrote it
  std::string config_yaml;   // the resolved run configuration, whole

  // Parameter paths may contain '.' and '/' ('/' nests HDF5 groups).  A name must not be
  // empty, start or end with '/', contain "//", "." or ".." components, or be a '/'-prefix of
  // another name in the same map (HDF5 cannot hold "a" as both dataset and group).
  std::map<std::string, NamedArray> model;             // /model/<path>
  std::map<std::string, NamedArray> optim_exp_avg;     // /optim/<path>/exp_avg
  std::map<std::string, NamedArray> optim_exp_avg_sq;  // /optim/<path>/exp_avg_sq
  int64_t optim_step = 0;                              // /optim attribute "step"
  std::map<std::string, NamedArray> schedules;         // /schedules/<name>
  std::map<std::string, NamedArray> baselines;         // /baselines/<name>
  std::map<int, std::string> rng;                      // /rng/rank_<r>: raw engine bytes
  std::map<std::string, int64_t> counters;             // /counters attributes; no '/' in names
};

bool operator==(const CheckpointData& a, const CheckpointData& b);
inline bool operator!=(const CheckpointData& a, const CheckpointData& b) { return !(a == b); }

// Writes `path` (HDF5, flushed and fsynced) and its digest file "<path>.sha256".  Not atomic:
// use CheckpointStore::publish for files that others may read.  Throws InputError for
// invalid names or arrays (before creating anything), SystemError for I/O failures.
void write_checkpoint_file(const std::string& path, const CheckpointData& data);

// Writes only the HDF5 file (flushed and fsynced), no digest.  CheckpointStore builds on it.
void write_checkpoint_hdf5(const std::string& path, const CheckpointData& data);

// Verifies the digest, then reads and verifies every dataset.  See the header comment for
// the errors.
CheckpointData read_checkpoint_file(const std::string& path);

// The current time as "YYYY-MM-DDTHH:MM:SSZ".
std::string utc_timestamp_now();

}  // namespace placeto
