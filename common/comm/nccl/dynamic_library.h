// DynamicLibrary: a shared library opened with dlopen at run time, so that one binary runs
// on CPU-only nodes (where libcudart/libnccl are absent or there is no driver) and on GPU
// nodes alike.  Internal to common/comm/.
//
// Threading: open/symbol are safe from any thread (dlopen/dlsym are).
#pragma once

#include <string>
#include <vector>

namespace placeto {
namespace comm_internal {

class DynamicLibrary {
 public:
  // Tries each candidate (a soname searched on the default path, or an absolute path) in
  // order; on failure ok() is false and error() lists every attempt's dlerror().
  explicit DynamicLibrary(const std::vector<std::string>& candidates);
  ~DynamicLibrary();
  DynamicLibrary(const DynamicLibrary&) = delete;
  DynamicLibrary& operator=(const DynamicLibrary&) = delete;

  bool ok() const { return handle_ != nullptr; }
  const std::string& error() const { return error_; }
  const std::string& path() const { return path_; }

  // The symbol's address; throws SystemError naming the library and symbol when missing.
  void* symbol(const char* name) const;

  template <typename Fn>
  void bind(Fn*& fn, const char* name) const {
    fn = reinterpret_cast<Fn*>(symbol(name));
  }

 private:
  void* handle_ = nullptr;
  std::string path_;
  std::string error_;
};

// Candidate locations of a CUDA-toolkit library: the path in environment variable
// `override_env` alone when it is set (a site's own build; the tests' fake library), else
// the default search path, then the usual toolkit directories.
std::vector<std::string> cuda_library_candidates(const char* override_env,
                                                 const std::vector<std::string>& sonames);

}  // namespace comm_internal
}  // namespace placeto
