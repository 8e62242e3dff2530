#include "common/malloc_tuning.h"

#include <cstdlib>
#include <mutex>
#include <string>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace placeto {

bool tune_malloc_for_tensors() {
  static std::once_flag once;
  static bool changed = false;
  std::call_once(once, [] {
#if defined(__GLIBC__)
    // PLACETO_DEFAULT_MALLOC=1 keeps glibc's defaults (to measure what the tuning buys).
    const char* keep = std::getenv("PLACETO_DEFAULT_MALLOC");
    if (keep && std::string(keep) == "1") return;
    // Blocks up to 1 GiB come from the heap; glibc caps the threshold lower on some versions,
    // so fall back to its documented 64-bit maximum (32 MiB).  Freed memory is returned to
    // the system only above 2 GiB of slack.
    const bool mmap_ok =
        mallopt(M_MMAP_THRESHOLD, 1 << 30) == 1 || mallopt(M_MMAP_THRESHOLD, 32 << 20) == 1;
    const bool trim_ok = mallopt(M_TRIM_THRESHOLD, 2047 << 20) == 1;
    changed = mmap_ok && trim_ok;
#endif
  });
  return changed;
}

}  // namespace placeto
