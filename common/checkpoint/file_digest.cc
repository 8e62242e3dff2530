#include "common/checkpoint/file_digest.h"

#include <openssl/evp.h>

#include <filesystem>

#include "common/checkpoint/checkpoint_error.h"
#include "common/files.h"

namespace placeto {

std::string sha256_hex(const void* data, size_t size) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_Digest(data, size, md, &len, EVP_sha256(), nullptr) != 1 || len != 32)
    throw SystemError("OpenSSL EVP_Digest(SHA-256) failed");
  static const char* kHex = "0123456789abcdef";
  std::string out(64, '0');
  for (unsigned int i = 0; i < len; ++i) {
    out[2 * i] = kHex[md[i] >> 4];
    out[2 * i + 1] = kHex[md[i] & 15];
  }
  return out;
}

std::string digest_path(const std::string& path) { return path + ".sha256"; }

std::string write_digest_file(const std::string& path) {
  const std::string bytes = read_file(path);
  const std::string hex = sha256_hex(bytes.data(), bytes.size());
  const std::string name = std::filesystem::path(path).filename().string();
  write_file_atomic(digest_path(path), hex + "  " + name + "\n");
  return hex;
}

std::string read_verified_file(const std::string& path) {
  if (!file_exists(path)) throw InputError(path + ": checkpoint file does not exist");
  const std::string dpath = digest_path(path);
  if (!file_exists(dpath))
    throw CheckpointCorruptError(path + ": digest file " + dpath +
                                 " is missing; refusing an unverifiable checkpoint");
  const std::string line = read_file(dpath);
  if (line.size() < 64 || line.find_first_not_of("0123456789abcdef") < 64)
    throw CheckpointCorruptError(dpath + ": malformed digest file (expected 64 hex digits)");
  const std::string expected = line.substr(0, 64);
  std::string bytes = read_file(path);
  const std::string actual = sha256_hex(bytes.data(), bytes.size());
  if (actual != expected)
    throw CheckpointCorruptError(path + ": SHA-256 mismatch (file " + actual + ", " + dpath + " " +
                                 expected + "): the checkpoint is truncated or damaged (" +
                                 std::to_string(bytes.size()) + " bytes)");
  return bytes;
}

}  // namespace placeto
