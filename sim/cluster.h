// The machine a placement runs on: devices (memory capacity, relative speed) and the
// constants of the simulator's execution model.  Plain struct, read from YAML
// (docs/FORMATS.md), written back whole into run directories.
#pragma once

#include <string>
#include <vector>

#include "common/yaml_util.h"

namespace placeto {

// The simulator's execution models.
enum class SimMode {
  // Bit-for-bit the Placeto paper's simulator (docs/SIMULATOR.md): one outgoing bus per
  // device, fixed per-op and per-transfer gaps, one transfer speed.
  kCompatible,
};

// Constants of the compatible mode, fitted by the paper's authors to AWS p2.8xlarge (K80).
struct CompatConstants {
  double delta1_us = 5.7;               // gap after each op on a device
  double delta2_us = 25.0;              // gap after each transfer on a bus
  double transfer_bytes_per_us = 7600;  // bus speed
  double init_offset_us = 0.0;          // start time of the source ops
};

struct DeviceSpec {
  std::string name;          // default "gpu<i>"
  double memory_bytes = 0;   // capacity; 0 means unlimited
};

struct Cluster {
  std::string name = "default";
  SimMode mode = SimMode::kCompatible;
  std::vector<DeviceSpec> devices;
  CompatConstants compat;

  int num_devices() const { return static_cast<int>(devices.size()); }
  bool has_memory_limits() const;

  // The cost view that placers (HEFT, m-ETF, ...) share with the simulator, so that their
  // estimates mean the same thing as simulated runtimes.
  // Compute time of an op of cost `cost_us` on `device`, without the gap after it.
  double op_time_us(double cost_us, int device) const;
  // Gap a device leaves after an op (the compatible mode's delta1; 0 after zero-cost ops).
  double op_gap_us(double cost_us) const { return cost_us == 0 ? 0 : compat.delta1_us; }
  // Time to move `bytes` from device `src` to device `dst` once the bus is free.
  double transfer_time_us(int64_t bytes, int src, int dst) const;
  // Gap a bus leaves after each transfer (delta2).
  double transfer_gap_us() const { return compat.delta2_us; }
};

// D identical devices with unlimited memory and the paper's constants.
Cluster default_cluster(int num_devices);

// Reads a cluster file.  Unknown keys, wrong types and out-of-range values throw InputError
// naming the file and the key.
Cluster load_cluster(const std::string& path);
Cluster cluster_from_yaml(const YamlField& root);
std::string cluster_to_yaml(const Cluster& c);

}  // namespace placeto
