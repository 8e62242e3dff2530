// Allocator settings for processes that run the policy network.
//
// LibTorch allocates and frees tensors of a few megabytes at every step of a batched
// forward/backward.  With glibc's defaults each such block is served by a fresh mmap and
// returned with munmap, so every tensor pays its page faults again; on the 200-op training
// benchmark this made an episode 3.8x slower (docs/PERFORMANCE.md).  Raising the mmap and trim
// thresholds keeps freed blocks in the heap for reuse.  Thread-safe; the first call wins and
// later calls do nothing.  No effect (and no error) on C libraries other than glibc, or when
// the environment sets PLACETO_DEFAULT_MALLOC=1.
#pragma once

namespace placeto {

// Returns true when the thresholds were changed (glibc), false otherwise.
bool tune_malloc_for_tensors();

}  // namespace placeto
