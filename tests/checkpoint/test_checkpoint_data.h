// A deterministic checkpoint touching every field and awkward values (NaN payloads, -0.0,
// denormals, int64 extremes, empty and scalar arrays, names with '.' and '/'), shared by the
// C++ tests, the writer helper and, by formula, tests/checkpoint/read_with_h5py.py.
#pragma once

#include <cstdint>

#include "common/checkpoint/checkpoint_file.h"

namespace placeto {

// `big_elems` > 0 adds "big/w", an f32 array of that many elements (for kill tests).
CheckpointData make_test_checkpoint(int64_t step, int64_t big_elems = 0);

}  // namespace placeto
