#include "common/comm/nccl/dynamic_library.h"

#include <dlfcn.h>

#include <cstdlib>

#include "common/error.h"

namespace placeto {
namespace comm_internal {

DynamicLibrary::DynamicLibrary(const std::vector<std::string>& candidates) {
  for (const std::string& candidate : candidates) {
    // RTLD_LOCAL keeps these symbols from interposing on a LibTorch that links its own CUDA.
    handle_ = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle_ != nullptr) {
      path_ = candidate;
      error_.clear();
      return;
    }
    const char* why = dlerror();
    error_ += (error_.empty() ? "" : "; ") + std::string(why != nullptr ? why : candidate);
  }
}

DynamicLibrary::~DynamicLibrary() {
  if (handle_ != nullptr) dlclose(handle_);
}

void* DynamicLibrary::symbol(const char* name) const {
  PLACETO_CHECK(handle_ != nullptr);
  dlerror();
  void* address = dlsym(handle_, name);
  if (address == nullptr) {
    const char* why = dlerror();
    throw SystemError("symbol " + std::string(name) + " not found in " + path_ + ": " +
                      (why != nullptr ? why : "null symbol"));
  }
  return address;
}

std::vector<std::string> cuda_library_candidates(const char* override_env,
                                                 const std::vector<std::string>& sonames) {
  const char* forced = std::getenv(override_env);
  if (forced != nullptr && *forced != '\0') return {forced};
  static const char* const kDirectories[] = {
      "/usr/local/cuda/lib64", "/usr/local/cuda/targets/x86_64-linux/lib", "/usr/local/cuda/lib"};
  std::vector<std::string> out(sonames);
  for (const char* directory : kDirectories) {
    for (const std::string& soname : sonames) out.push_back(std::string(directory) + "/" + soname);
  }
  return out;
}

}  // namespace comm_internal
}  // namespace placeto
