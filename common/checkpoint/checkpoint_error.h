// The error a checkpoint raises when its bytes are damaged (truncated, bit-flipped, a missing
// or wrong digest, a dataset whose checksum does not match).  It is an InputError, so callers
// that only report errors need nothing new; CheckpointStore::load_latest() catches exactly this
// type to fall back to an older checkpoint, and lets every other error (a newer format
// version, a missing dataset in an intact file) propagate because an older file would not fix it.
#pragma once

#include "common/error.h"

namespace placeto {

class CheckpointCorruptError : public InputError {
 public:
  using InputError::InputError;
};

}  // namespace placeto
