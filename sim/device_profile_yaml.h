// Device profiles in files: the fitted profiles that `placeto profile` writes and that
// `placeto import --profile FILE.yaml` reads (docs/FORMATS.md "Device profile").  Kept apart
// from cost_model.h so that it does not expose yaml-cpp.
//
//   format: placeto-device-profile
//   version: 1
//   name: cpu-fitted
//   base: k80                  # optional: fields not given come from this named profile
//   peak_flops: 5.0e10         # the roofline of op classes without a fitted rate
//   mem_bandwidth: 8.0e9
//   compute_efficiency: 1
//   memory_efficiency: 1
//   launch_overhead_us: 2.5
//   op_classes:                # fitted rates per class (sim/onnx/op_costs.h cost_class)
//     conv: {flops_per_s: 4.1e10, bytes_per_s: 6.0e9, overhead_us: 9.5}
//   fitted: {...}              # free-form notes on the fit (model, ops, device); not read
#pragma once

#include <string>

#include "sim/cost_model.h"

namespace placeto {

// Reads a profile file; InputError naming the file, the key and the value on anything wrong
// (unknown keys, non-positive rates, an unknown base).
DeviceProfile load_device_profile_file(const std::string& path);
DeviceProfile device_profile_from_yaml_text(const std::string& text, const std::string& source);

// A named profile ("k80") or, when `name_or_path` ends in .yaml or .yml, a profile file.
DeviceProfile resolve_device_profile(const std::string& name_or_path);

// The file text of `p` (every field written; `fitted_notes` is a YAML flow mapping or empty).
std::string device_profile_to_yaml(const DeviceProfile& p, const std::string& fitted_notes = "");

}  // namespace placeto
