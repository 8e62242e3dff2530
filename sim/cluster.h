// The machine a placement runs on: devices (memory capacity, relative speed, profile, node)
// the links between them, and the constants of the simulator's execution models.  Plain
// struct, read from YAML (docs/FORMATS.md, experiments/clusters/), written back whole into run
// directories.  Thread-safe for concurrent reads.
#pragma once

#include <string>
#include <vector>

namespace placeto {

// The simulator's execution models (docs/SIMULATOR.md).
enum class SimMode {
  // Bit-for-bit the Placeto paper's simulator: one outgoing bus per device, fixed per-op and
  // per-transfer gaps, one transfer speed, one transfer per output for all remote children.
  kCompatible,
  // Devices of different speeds; a bandwidth and latency per (source, destination) pair; one
  // transfer per (output, destination device); contention per bus or per link.
  kHeterogeneous,
};

// Which transfers wait for each other in the heterogeneous mode.
enum class Contention {
  kBus,      // all transfers leaving a device share its one outgoing bus (as in kCompatible)
  kPerLink,  // each ordered (source, destination) pair has its own queue
};

// Constants of the compatible mode, fitted by the paper's authors to AWS p2.8xlarge (K80).
struct CompatConstants {
  double delta1_us = 5.7;               // gap after each op on a device
  double delta2_us = 25.0;              // gap after each transfer on a bus
  double transfer_bytes_per_us = 7600;  // bus speed
  double init_offset_us = 0.0;          // start time of the source ops
};

// Constants of the heterogeneous mode.  The defaults are the compatible mode's gaps, so a
// two-device heterogeneous cluster with unit speeds and 7600 B/us zero-latency links
// simulates exactly like the compatible mode.
struct HeteroConstants {
  double op_gap_us = 5.7;         // gap a device leaves after each op of nonzero cost
  double transfer_gap_us = 25.0;  // gap a bus (or link) leaves after each transfer
  Contention contention = Contention::kBus;
};

struct DeviceSpec {
  std::string name;             // default "gpu<i>"
  double memory_bytes = 0;      // capacity; 0 means unlimited
  std::string profile = "k80";  // sim/cost_model.h profile: links and default capacity
  double speed = 1.0;           // compute speed relative to the profile the graph was costed on
  int node = 0;                 // machine index: same node -> intra-node link, else network
};

// One direction of a link between two devices.
struct LinkSpec {
  double bytes_per_us = 0;
  double latency_us = 0;
};

// An explicit link between two devices that replaces the one derived from their profiles.
struct LinkOverride {
  int src = 0;
  int dst = 0;
  LinkSpec link;
  bool both_directions = true;
};

struct Cluster {
  std::string name = "default";
  SimMode mode = SimMode::kCompatible;
  std::vector<DeviceSpec> devices;
  CompatConstants compat;
  HeteroConstants hetero;
  std::vector<LinkOverride> link_overrides;
  // Row-major num_devices x num_devices matrix filled by derive_links(); the diagonal is
  // unused.  Only the heterogeneous mode reads it.
  std::vector<LinkSpec> links;

  int num_devices() const { return static_cast<int>(devices.size()); }
  bool heterogeneous() const { return mode == SimMode::kHeterogeneous; }
  bool has_memory_limits() const;
  // REQUIRES: derive_links() ran after the last change to devices or overrides.
  const LinkSpec& link(int src, int dst) const {
    return links[static_cast<size_t>(src) * devices.size() + dst];
  }
  // Fills `links` from the devices' profiles and nodes, then applies the overrides: devices
  // on one node use the slower of their intra-node links (max latency), devices on different
  // nodes the slower of their network links.  Throws InputError on unknown profiles or
  // overrides naming devices out of range.
  void derive_links();

  // The cost view that placers (HEFT, m-ETF, ...) share with the simulator, so that their
  // estimates mean the same thing as simulated runtimes.
  // Compute time of an op of cost `cost_us` on `device`, without the gap after it.
  double op_time_us(double cost_us, int device) const {
    return mode == SimMode::kCompatible ? cost_us : cost_us / devices[device].speed;
  }
  // Gap a device leaves after an op (0 after zero-cost ops).
  double op_gap_us(double cost_us) const {
    return cost_us == 0 ? 0 : (mode == SimMode::kCompatible ? compat.delta1_us : hetero.op_gap_us);
  }
  // Time from the start of a transfer of `bytes` from `src` to `dst` until it arrives
  // (heterogeneous: latency + bytes / bandwidth).  0 when src == dst.
  double transfer_time_us(int64_t bytes, int src, int dst) const;
  // Time the bus (or link) stays busy with that transfer, gap included.
  double transfer_busy_us(int64_t bytes, int src, int dst) const;
  // Gap a bus leaves after each transfer.
  double transfer_gap_us() const {
    return mode == SimMode::kCompatible ? compat.delta2_us : hetero.transfer_gap_us;
  }
};

// D identical devices with unlimited memory and the paper's constants.
Cluster default_cluster(int num_devices);

// `nodes` machines of `per_node` devices of one profile, heterogeneous mode, unit speeds,
// memory capacity from the profile, links derived from the profile.
Cluster profile_cluster(const std::string& profile, int nodes, int per_node,
                        Contention contention = Contention::kBus);

// Reads a cluster file.  Unknown keys, wrong types and out-of-range values throw InputError
// naming the file and the key.
Cluster load_cluster(const std::string& path);
std::string cluster_to_yaml(const Cluster& c);

// The cluster a command was given: the file if `file` is set (`devices`, when > 0, must
// agree with it), else `devices` identical devices (default_cluster), else
// `fallback_devices` when > 0 (e.g. the count a policy was trained for).  Throws InputError
// naming --devices/--cluster when nothing was given or the two disagree.
Cluster resolve_cluster(const std::string& file, int devices, int fallback_devices = 0);

}  // namespace placeto
