#include "launch/torch_module.h"

#include <dlfcn.h>
#include <unistd.h>

#include <climits>
#include <string>

#include "common/error.h"

namespace placeto {
namespace {

// <dir of the executable>/../lib/libplaceto_torch.so
std::string module_path() {
  char buf[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) throw SystemError("cannot read /proc/self/exe to find libplaceto_torch.so");
  std::string exe(buf, static_cast<size_t>(n));
  const std::string dir = exe.substr(0, exe.rfind('/'));
  return dir + "/../lib/libplaceto_torch.so";
}

}  // namespace

TrainerInfo load_placeto_trainer_module() {
  static void* handle = nullptr;
  const std::string path = module_path();
  if (!handle) {
    handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
    if (!handle)
      throw InputError(path + ": cannot load the LibTorch module that trains the Placeto policy (" +
                       std::string(::dlerror()) + ")");
  }
  using Entry = void (*)(TrainerInfo*);
  auto entry = reinterpret_cast<Entry>(::dlsym(handle, "placeto_torch_module_trainer"));
  if (!entry)
    throw InputError(path + ": has no placeto_torch_module_trainer (a module of another build?)");
  TrainerInfo t;
  entry(&t);
  return t;
}

}  // namespace placeto
