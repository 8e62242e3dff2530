// Whole-file SHA-256 digests kept beside a checkpoint ("ckpt_7.h5" -> "ckpt_7.h5.sha256", in
// the format of `sha256sum`, so `sha256sum -c ckpt_7.h5.sha256` checks it by hand).
//
// read_verified_file() is the only way checkpoint bytes reach libhdf5: it reads the whole
// file once, checks the digest, and hands those same bytes on (HDF5 then opens them from
// memory), so a truncated or bit-flipped file is refused before libhdf5 sees a byte and the
// file cannot change between the check and the parse.
//
// Thread safety: free functions without shared state.
#pragma once

#include <string>

namespace placeto {

// Lower-case hex SHA-256 of a buffer (OpenSSL).
std::string sha256_hex(const void* data, size_t size);

// "<path>.sha256".
std::string digest_path(const std::string& path);

// Hashes `path` and writes its digest file atomically (common/files.h write_file_atomic).
// Returns the hex digest.  Throws SystemError / InputError naming the file.
std::string write_digest_file(const std::string& path);

// Reads `path` and its digest file; returns the file's bytes when the digest matches.
// Throws CheckpointCorruptError naming the file when the digest file is missing or malformed
// or the digest differs (truncated / damaged file), InputError when `path` cannot be read.
std::string read_verified_file(const std::string& path);

}  // namespace placeto
