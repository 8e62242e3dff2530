// ONNX import (sim/onnx/onnx_import.h): protobuf parsing, ONNX shape inference, the importer's
// own shape rules, costs, default options (inference graph).
#include <spdlog/spdlog.h>

#include <string>

#include "common/error.h"
#include "sim/onnx/onnx_import.h"
#include "tests/fuzz/fuzz_targets.h"

namespace placeto::fuzz {

void fuzz_onnx(const uint8_t* data, size_t size) {
  // The importer warns about every odd model; at thousands of inputs a second that is noise
  // and most of the time spent.
  static const bool quiet = (spdlog::set_level(spdlog::level::off), true);
  (void)quiet;
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  try {
    (void)import_onnx_bytes(bytes, "fuzz", ImportOptions{});
  } catch (const Error&) {
  }
}

}  // namespace placeto::fuzz

PLACETO_FUZZ_ENTRY(fuzz_onnx)
