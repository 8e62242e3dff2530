// Checkpoint files (common/checkpoint/checkpoint_file.h): read_checkpoint_file on a file and
// its "<file>.sha256", written to a per-process scratch directory (/dev/shm when it exists).
// Two targets, because they face different attackers:
//
//  fuzz_checkpoint: the input is the digest file's text up to and including the first '\n',
//    then the checkpoint's bytes.  This is the ordinary case -- a damaged, truncated or
//    foreign file -- which the whole-file digest must refuse before libhdf5 sees a byte.
//  fuzz_checkpoint_hdf5: the input is the checkpoint's bytes and the target writes the
//    matching digest itself -- what an attacker who can also write the .sha256 gets past the
//    digest, so this fuzzes libhdf5 (from memory) and our dataset/attribute reading behind it.
//    Debian's libhdf5 crashes on some such files (docs/RELIABILITY.md); launch/fuzz runs this
//    target with -fork/-ignore_crashes and reports them apart from our own findings.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "common/checkpoint/checkpoint_file.h"
#include "common/checkpoint/file_digest.h"
#include "common/error.h"
#include "tests/fuzz/fuzz_targets.h"

namespace placeto::fuzz {
namespace {

class ScratchDir {
 public:
  ScratchDir() {
    namespace fs = std::filesystem;
    const fs::path base =
        fs::is_directory("/dev/shm") ? fs::path("/dev/shm") : fs::temp_directory_path();
    dir_ = base / ("placeto_fuzz_ckpt_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  std::string file(const std::string& name) const { return (dir_ / name).string(); }

 private:
  std::filesystem::path dir_;
};

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw SystemError(path + ": cannot write the fuzz input");
}

void read_back(const std::string& file_bytes, const std::string& digest_text) {
  static const ScratchDir scratch;
  const std::string path = scratch.file("ckpt.h5");
  write_bytes(path, file_bytes);
  write_bytes(digest_path(path), digest_text);
  try {
    (void)read_checkpoint_file(path);
  } catch (const Error&) {
  }
}

}  // namespace

void fuzz_checkpoint(const uint8_t* data, size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  const size_t nl = input.find('\n');
  const size_t split = nl == std::string::npos ? input.size() : nl + 1;
  const std::string body = input.substr(split);
  const std::string digest = input.substr(0, split);
  // libFuzzer's comparison tracing copies the digest our code computes into the input, so
  // some inputs pass the check and reach libhdf5, which hangs on some damaged files (a CI
  // run timed out in H5HG_read).  Those inputs are fuzz_checkpoint_hdf5's job, which runs
  // with -ignore_timeouts; this target keeps to the refusal path.
  if (digest.compare(0, 64, sha256_hex(body.data(), body.size())) == 0) return;
  read_back(body, digest);
}

void fuzz_checkpoint_hdf5(const uint8_t* data, size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  read_back(input, sha256_hex(input.data(), input.size()) + "  ckpt.h5\n");
}

}  // namespace placeto::fuzz

#ifdef PLACETO_FUZZ_CHECKPOINT_HDF5
PLACETO_FUZZ_ENTRY(fuzz_checkpoint_hdf5)
#else
PLACETO_FUZZ_ENTRY(fuzz_checkpoint)
#endif
