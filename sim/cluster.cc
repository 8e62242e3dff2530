#include "sim/cluster.h"

#include <sstream>

#include "common/error.h"

namespace placeto {

bool Cluster::has_memory_limits() const {
  for (const auto& d : devices)
    if (d.memory_bytes > 0) return true;
  return false;
}

double Cluster::op_time_us(double cost_us, int /*device*/) const { return cost_us; }

double Cluster::transfer_time_us(int64_t bytes, int src, int dst) const {
  if (src == dst) return 0;
  return static_cast<double>(bytes) / compat.transfer_bytes_per_us;
}

Cluster default_cluster(int num_devices) {
  PLACETO_CHECK_GE(num_devices, 1);
  Cluster c;
  c.devices.resize(num_devices);
  for (int i = 0; i < num_devices; ++i) c.devices[i].name = "gpu" + std::to_string(i);
  return c;
}

Cluster cluster_from_yaml(const YamlField& root) {
  if (!root.is_map()) root.fail("a cluster file must be a mapping");
  root.check_keys({"name", "mode", "devices", "memory_bytes", "compat"});
  Cluster c;
  root.get("name", &c.name);
  if (root.has("mode")) {
    std::string mode = root.at("mode").as_string();
    if (mode != "compatible")
      root.at("mode").fail("unknown simulator mode '" + mode + "' (known: compatible)");
  }
  double default_memory = 0;
  root.get("memory_bytes", &default_memory);
  if (default_memory < 0) root.at("memory_bytes").fail("must be >= 0");
  YamlField devices = root.at("devices");
  if (!devices.defined()) root.fail("'devices' is missing (a count or a list of devices)");
  if (devices.is_sequence()) {
    if (devices.size() == 0) devices.fail("needs at least one device");
    for (size_t i = 0; i < devices.size(); ++i) {
      YamlField d = devices.at(i);
      d.check_keys({"name", "memory_bytes"});
      DeviceSpec spec;
      spec.name = "gpu" + std::to_string(i);
      spec.memory_bytes = default_memory;
      d.get("name", &spec.name);
      d.get("memory_bytes", &spec.memory_bytes);
      if (spec.memory_bytes < 0) d.at("memory_bytes").fail("must be >= 0");
      c.devices.push_back(spec);
    }
  } else {
    int64_t n = devices.as_int();
    if (n < 1 || n > 4096) devices.fail("must be in [1, 4096], got " + std::to_string(n));
    for (int64_t i = 0; i < n; ++i)
      c.devices.push_back(DeviceSpec{"gpu" + std::to_string(i), default_memory});
  }
  YamlField compat = root.at("compat");
  compat.check_keys({"delta1_us", "delta2_us", "transfer_bytes_per_us", "init_offset_us"});
  compat.get("delta1_us", &c.compat.delta1_us);
  compat.get("delta2_us", &c.compat.delta2_us);
  compat.get("transfer_bytes_per_us", &c.compat.transfer_bytes_per_us);
  compat.get("init_offset_us", &c.compat.init_offset_us);
  if (c.compat.delta1_us < 0) compat.at("delta1_us").fail("must be >= 0");
  if (c.compat.delta2_us < 0) compat.at("delta2_us").fail("must be >= 0");
  if (!(c.compat.transfer_bytes_per_us > 0)) compat.at("transfer_bytes_per_us").fail("must be > 0");
  if (c.compat.init_offset_us < 0) compat.at("init_offset_us").fail("must be >= 0");
  return c;
}

Cluster load_cluster(const std::string& path) {
  return cluster_from_yaml(YamlField(load_yaml_file(path), path, ""));
}

std::string cluster_to_yaml(const Cluster& c) {
  YAML::Emitter out;
  out.SetDoublePrecision(17);
  out << YAML::BeginMap;
  out << YAML::Key << "name" << YAML::Value << c.name;
  out << YAML::Key << "mode" << YAML::Value << "compatible";
  out << YAML::Key << "devices" << YAML::Value << YAML::BeginSeq;
  for (const auto& d : c.devices) {
    out << YAML::BeginMap << YAML::Key << "name" << YAML::Value << d.name;
    out << YAML::Key << "memory_bytes" << YAML::Value << d.memory_bytes << YAML::EndMap;
  }
  out << YAML::EndSeq;
  out << YAML::Key << "compat" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "delta1_us" << YAML::Value << c.compat.delta1_us;
  out << YAML::Key << "delta2_us" << YAML::Value << c.compat.delta2_us;
  out << YAML::Key << "transfer_bytes_per_us" << YAML::Value << c.compat.transfer_bytes_per_us;
  out << YAML::Key << "init_offset_us" << YAML::Value << c.compat.init_offset_us;
  out << YAML::EndMap << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

}  // namespace placeto
