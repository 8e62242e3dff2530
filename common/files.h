// Whole-file I/O with errors that name the file, and atomic publication of files.
#pragma once

#include <string>

namespace placeto {

// Reads the whole file. Throws InputError naming the path when it cannot be read.
std::string read_file(const std::string& path);

// Writes `content` to `path` atomically: path.tmp is written, flushed and fsynced, renamed
// over `path`, and the directory is fsynced.  A crash at any point leaves either the old file
// or the new one, never a half-written one.  Throws SystemError on failure (the old file is
// kept and the temporary removed).
void write_file_atomic(const std::string& path, const std::string& content);

// fsyncs a directory so that a rename inside it is durable.
void fsync_directory(const std::string& dir);

// fsyncs a file written by other means (e.g. libhdf5) before it is renamed into place.
void fsync_file(const std::string& path);

// The directory part of a path ("." when there is none).
std::string parent_directory(const std::string& path);

bool file_exists(const std::string& path);

// Creates the directory and its parents (like mkdir -p). Throws SystemError.
void make_directories(const std::string& path);

}  // namespace placeto
