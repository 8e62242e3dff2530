#include "launch/torch_module.h"

#include <dlfcn.h>
#include <unistd.h>

#include <climits>
#include <map>
#include <string>

#include "common/error.h"
#include "placeto/config.h"

namespace placeto {
namespace {

// <dir of the executable>/../lib/libplaceto_<name>.so (unused in a build without LibTorch).
[[maybe_unused]] std::string module_path(const std::string& name) {
  char buf[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) throw SystemError("cannot read /proc/self/exe to find libplaceto_" + name + ".so");
  std::string exe(buf, static_cast<size_t>(n));
  const std::string dir = exe.substr(0, exe.rfind('/'));
  return dir + "/../lib/libplaceto_" + name + ".so";
}

}  // namespace

const TorchModule& torch_module(const std::string& name) {
  static std::map<std::string, TorchModule> loaded;
  auto it = loaded.find(name);
  if (it != loaded.end()) return it->second;
#if !PLACETO_HAVE_TORCH
  throw InputError("this needs LibTorch (the " + name +
                   " module), and this build has none: apt install libtorch-dev and rebuild");
#else
  const std::string path = module_path(name);
  // Never closed: the module's code backs placers and trainers until exit.
  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (!handle)
    throw InputError(path + ": cannot load the LibTorch module (" + std::string(::dlerror()) +
                     "); build it with `cmake --build build --target placeto_" + name + "`");
  const std::string symbol = "placeto_module_" + name;
  using Entry = void (*)(TorchModule*);
  auto entry = reinterpret_cast<Entry>(::dlsym(handle, symbol.c_str()));
  if (!entry) throw InputError(path + ": has no " + symbol + " (a module of another build?)");
  TorchModule m;
  entry(&m);
  m.path = path;
  return loaded.emplace(name, std::move(m)).first->second;
#endif
}

}  // namespace placeto
