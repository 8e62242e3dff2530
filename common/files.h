// Whole-file I/O with errors that name the file, and atomic publication of files.
#pragma once

#include <string>
#include <vector>

namespace placeto {

// Reads the whole file. Throws InputError naming the path when it cannot be read.
std::string read_file(const std::string& path);

// Writes `content` to `path` atomically: path.tmp is written, flushed and fsynced, renamed
// over `path`, and the directory is fsynced.  A crash at any point leaves either the old file
// or the new one, never a half-written one.  `path` must pass check_output_path(); a symbolic
// link to a regular file is followed (the file it names is replaced, the link is kept).
// Throws InputError for a path that cannot be an output and SystemError when writing fails
// (ENOSPC, EIO, EFBIG): the old file is kept and the temporary removed.
void write_file_atomic(const std::string& path, const std::string& content);

// Refuses, with an InputError naming `option` and the path, an output path that write_file_atomic
// must not replace: one that exists and is not a regular file (a device, a directory, a FIFO, a
// socket, or a link to one), one whose folder is missing or is not a folder, and one that is
// the same file as any of `inputs`.  Commands call it before doing any work.
void check_output_path(const std::string& path, const std::vector<std::string>& inputs = {},
                       const std::string& option = "--out");

// fsyncs a directory so that a rename inside it is durable.
void fsync_directory(const std::string& dir);

// fsyncs a file written by other means (e.g. libhdf5) before it is renamed into place.
void fsync_file(const std::string& path);

// The directory part of a path ("." when there is none).
std::string parent_directory(const std::string& path);

bool file_exists(const std::string& path);

// Creates the directory and its parents (like mkdir -p). Throws SystemError.
void make_directories(const std::string& path);

// An exclusive advisory lock (flock) on `path`, held while the object lives; the kernel drops
// it when the process dies, so a killed or preempted holder never leaves a stale lock.  The
// file records who holds it (pid, host, time).  When another process still holds it after
// `wait_s` seconds (a holder that was just killed needs a moment to be reaped) the constructor
// throws InputError naming `path`, `what` and that holder.
class FileLock {
 public:
  FileLock(const std::string& path, const std::string& what, double wait_s = 0);
  ~FileLock();
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  int fd_ = -1;
};

}  // namespace placeto
