// The fuzzed entry points (tests/fuzz/, docs/RELIABILITY.md "Fuzzing").  Each function feeds
// one input to one parser the way an attacker-controlled file would reach it, and lets every
// exception that is not a placeto::Error escape: a parser may refuse bad bytes only with
// placeto::Error (usually InputError), never crash, hang or throw anything else.
//
// Each fuzz_<name>.cc defines one function and, in the libFuzzer executables (built with
// PLACETO_FUZZ_ENTRY_POINTS), LLVMFuzzerTestOneInput calling it.  fuzz_regressions_test
// compiles the same files without the entry points and replays the committed corpora and the
// inputs that once crashed, with whatever compiler CI uses.
//
// Thread safety: the functions keep no state across calls except fuzz_checkpoint's scratch
// directory, which is per process; call them from one thread.
#pragma once

#include <cstddef>
#include <cstdint>

namespace placeto::fuzz {

void fuzz_graph(const uint8_t* data, size_t size);            // graph (+ placement) JSON
void fuzz_cluster_yaml(const uint8_t* data, size_t size);     // cluster YAML
void fuzz_onnx(const uint8_t* data, size_t size);             // ONNX protobuf bytes
void fuzz_checkpoint(const uint8_t* data, size_t size);       // digest line + checkpoint file
void fuzz_checkpoint_hdf5(const uint8_t* data, size_t size);  // checkpoint file, digest matching
void fuzz_train_config(const uint8_t* data, size_t size);     // training config YAML

}  // namespace placeto::fuzz

#ifdef PLACETO_FUZZ_ENTRY_POINTS
#define PLACETO_FUZZ_ENTRY(fn)                                              \
  extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) { \
    ::placeto::fuzz::fn(data, size);                                        \
    return 0;                                                               \
  }
#else
#define PLACETO_FUZZ_ENTRY(fn)
#endif
