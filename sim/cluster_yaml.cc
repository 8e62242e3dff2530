// Cluster files (YAML): see docs/FORMATS.md and experiments/clusters/.
#include "sim/cluster_yaml.h"

#include <cstdlib>

#include "common/error.h"
#include "sim/cost_model.h"

namespace placeto {
namespace {

const char* contention_name(Contention c) { return c == Contention::kBus ? "bus" : "per-link"; }

void read_profile(const YamlField& f, const std::string& key, std::string* out) {
  if (!f.has(key)) return;
  std::string name = f.at(key).as_string();
  try {
    device_profile(name);
  } catch (const InputError& e) {
    f.at(key).fail(e.what());
  }
  *out = name;
}

int device_ref(const YamlField& f, const Cluster& c) {
  const std::string s = f.as_string();
  char* end = nullptr;
  long v = std::strtol(s.c_str(), &end, 10);
  if (!s.empty() && end == s.c_str() + s.size()) {
    if (v < 0 || v >= c.num_devices())
      f.fail("device index " + s + " is out of range [0, " + std::to_string(c.num_devices()) + ")");
    return static_cast<int>(v);
  }
  for (int i = 0; i < c.num_devices(); ++i)
    if (c.devices[i].name == s) return i;
  f.fail("unknown device '" + s + "' (give an index or a device name)");
}

// A capacity in bytes: finite (as_double refuses NaN and infinities), >= 0 (0 = unlimited) and
// at most 2^62, so that sums of per-device needs stay exact in int64 arithmetic.
double read_memory_bytes(const YamlField& f, const std::string& key, double fallback) {
  if (!f.has(key)) return fallback;
  const double v = f.at(key).as_double();
  if (!(v >= 0 && v <= 4611686018427387904.0))
    f.at(key).fail("must be in [0, 2^62] bytes (0 = unlimited), got " + f.at(key).as_string());
  return v;
}

}  // namespace

Cluster cluster_from_yaml(const YamlField& root) {
  if (!root.is_map()) root.fail("a cluster file must be a mapping");
  root.check_keys({"name", "mode", "devices", "memory_bytes", "profile", "devices_per_node",
                   "contention", "op_gap_us", "transfer_gap_us", "links", "compat"});
  Cluster c;
  root.get("name", &c.name);
  if (root.has("mode")) {
    std::string mode = root.at("mode").as_string();
    if (mode == "heterogeneous")
      c.mode = SimMode::kHeterogeneous;
    else if (mode != "compatible")
      root.at("mode").fail("unknown simulator mode '" + mode +
                           "' (known: compatible, heterogeneous)");
  }
  if (!c.heterogeneous())
    for (const char* key : {"contention", "op_gap_us", "transfer_gap_us", "links"})
      if (root.has(key))
        root.at(key).fail(
            "only meaningful with 'mode: heterogeneous' (the compatible mode "
            "reproduces the paper's simulator and has no such setting)");
  std::string default_profile = "k80";
  read_profile(root, "profile", &default_profile);
  double default_memory = c.heterogeneous() ? device_profile(default_profile).memory_bytes : 0;
  default_memory = read_memory_bytes(root, "memory_bytes", default_memory);
  int per_node = 0;
  root.get("devices_per_node", &per_node);
  if (root.has("devices_per_node") && per_node < 1)
    root.at("devices_per_node").fail("must be >= 1");
  YamlField devices = root.at("devices");
  if (!devices.defined()) root.fail("'devices' is missing (a count or a list of devices)");
  if (devices.is_sequence()) {
    if (devices.size() == 0) devices.fail("needs at least one device");
    for (size_t i = 0; i < devices.size(); ++i) {
      YamlField d = devices.at(i);
      d.check_keys({"name", "memory_bytes", "profile", "speed", "node"});
      DeviceSpec spec;
      spec.name = "gpu" + std::to_string(i);
      spec.profile = default_profile;
      read_profile(d, "profile", &spec.profile);
      spec.memory_bytes = default_memory;
      if (c.heterogeneous() && !root.has("memory_bytes") && d.has("profile"))
        spec.memory_bytes = device_profile(spec.profile).memory_bytes;
      spec.node = per_node > 0 ? static_cast<int>(i) / per_node : 0;
      d.get("name", &spec.name);
      spec.memory_bytes = read_memory_bytes(d, "memory_bytes", spec.memory_bytes);
      d.get("speed", &spec.speed);
      d.get("node", &spec.node);
      if (!(spec.speed > 0)) d.at("speed").fail("must be > 0");
      if (spec.node < 0) d.at("node").fail("must be >= 0");
      if (!c.heterogeneous() && spec.speed != 1.0)
        d.at("speed").fail("device speeds need 'mode: heterogeneous'");
      c.devices.push_back(spec);
    }
  } else {
    int64_t n = devices.as_int();
    // The link table has n^2 entries: 1024 devices are 16 MB of it, 4096 were 268 MB and
    // seconds of set-up from a 12-byte file (found by fuzzing).
    if (n < 1 || n > 1024) devices.fail("must be in [1, 1024], got " + std::to_string(n));
    for (int64_t i = 0; i < n; ++i) {
      DeviceSpec spec;
      spec.name = "gpu" + std::to_string(i);
      spec.memory_bytes = default_memory;
      spec.profile = default_profile;
      spec.node = per_node > 0 ? static_cast<int>(i / per_node) : 0;
      c.devices.push_back(spec);
    }
  }
  if (root.has("contention")) {
    std::string s = root.at("contention").as_string();
    if (s == "bus")
      c.hetero.contention = Contention::kBus;
    else if (s == "per-link")
      c.hetero.contention = Contention::kPerLink;
    else
      root.at("contention").fail("unknown contention model '" + s + "' (known: bus, per-link)");
  }
  root.get("op_gap_us", &c.hetero.op_gap_us);
  root.get("transfer_gap_us", &c.hetero.transfer_gap_us);
  if (c.hetero.op_gap_us < 0) root.at("op_gap_us").fail("must be >= 0");
  if (c.hetero.transfer_gap_us < 0) root.at("transfer_gap_us").fail("must be >= 0");
  YamlField links = root.at("links");
  if (links.defined()) {
    if (!links.is_sequence()) links.fail("expected a list of {src, dst, gbytes_per_s, latency_us}");
    for (size_t i = 0; i < links.size(); ++i) {
      YamlField l = links.at(i);
      l.check_keys({"src", "dst", "gbytes_per_s", "latency_us", "both_directions"});
      for (const char* key : {"src", "dst", "gbytes_per_s"})
        if (!l.has(key)) l.fail(std::string("'") + key + "' is missing");
      LinkOverride o;
      o.src = device_ref(l.at("src"), c);
      o.dst = device_ref(l.at("dst"), c);
      if (o.src == o.dst) l.at("dst").fail("a link joins two different devices");
      double gbs = l.at("gbytes_per_s").as_double();
      if (!(gbs > 0)) l.at("gbytes_per_s").fail("must be > 0");
      o.link.bytes_per_us = gbs * 1e3;
      l.get("latency_us", &o.link.latency_us);
      if (o.link.latency_us < 0) l.at("latency_us").fail("must be >= 0");
      l.get("both_directions", &o.both_directions);
      c.link_overrides.push_back(o);
    }
  }
  if (root.has("compat")) {
    YamlField compat = root.at("compat");
    compat.check_keys({"delta1_us", "delta2_us", "transfer_bytes_per_us", "init_offset_us"});
    compat.get("delta1_us", &c.compat.delta1_us);
    compat.get("delta2_us", &c.compat.delta2_us);
    compat.get("transfer_bytes_per_us", &c.compat.transfer_bytes_per_us);
    compat.get("init_offset_us", &c.compat.init_offset_us);
    if (c.compat.delta1_us < 0) compat.at("delta1_us").fail("must be >= 0");
    if (c.compat.delta2_us < 0) compat.at("delta2_us").fail("must be >= 0");
    if (!(c.compat.transfer_bytes_per_us > 0))
      compat.at("transfer_bytes_per_us").fail("must be > 0");
    if (c.compat.init_offset_us < 0) compat.at("init_offset_us").fail("must be >= 0");
  }
  c.derive_links();
  return c;
}

Cluster load_cluster(const std::string& path) {
  return cluster_from_yaml(YamlField(load_yaml_file(path), path, ""));
}

Cluster resolve_cluster(const std::string& file, int devices, int fallback_devices) {
  if (file.empty()) {
    if (devices > 0) return default_cluster(devices);
    if (fallback_devices > 0) return default_cluster(fallback_devices);
    throw InputError("give the number of devices with --devices or a --cluster file");
  }
  Cluster c = load_cluster(file);
  if (devices > 0 && devices != c.num_devices())
    throw InputError("--devices " + std::to_string(devices) + " contradicts " + file +
                     ", which has " + std::to_string(c.num_devices()) + " devices");
  return c;
}

std::string cluster_to_yaml(const Cluster& c) {
  YAML::Emitter out;
  out.SetDoublePrecision(17);
  out << YAML::BeginMap;
  out << YAML::Key << "name" << YAML::Value << c.name;
  out << YAML::Key << "mode" << YAML::Value << (c.heterogeneous() ? "heterogeneous" : "compatible");
  if (c.heterogeneous()) {
    out << YAML::Key << "contention" << YAML::Value << contention_name(c.hetero.contention);
    out << YAML::Key << "op_gap_us" << YAML::Value << c.hetero.op_gap_us;
    out << YAML::Key << "transfer_gap_us" << YAML::Value << c.hetero.transfer_gap_us;
  }
  out << YAML::Key << "devices" << YAML::Value << YAML::BeginSeq;
  for (const auto& d : c.devices) {
    out << YAML::BeginMap << YAML::Key << "name" << YAML::Value << d.name;
    out << YAML::Key << "memory_bytes" << YAML::Value << d.memory_bytes;
    out << YAML::Key << "profile" << YAML::Value << d.profile;
    if (c.heterogeneous()) out << YAML::Key << "speed" << YAML::Value << d.speed;
    out << YAML::Key << "node" << YAML::Value << d.node << YAML::EndMap;
  }
  out << YAML::EndSeq;
  if (c.heterogeneous() && !c.link_overrides.empty()) {
    out << YAML::Key << "links" << YAML::Value << YAML::BeginSeq;
    for (const auto& o : c.link_overrides) {
      out << YAML::BeginMap << YAML::Key << "src" << YAML::Value << o.src;
      out << YAML::Key << "dst" << YAML::Value << o.dst;
      out << YAML::Key << "gbytes_per_s" << YAML::Value << o.link.bytes_per_us * 1e-3;
      out << YAML::Key << "latency_us" << YAML::Value << o.link.latency_us;
      out << YAML::Key << "both_directions" << YAML::Value << o.both_directions << YAML::EndMap;
    }
    out << YAML::EndSeq;
  }
  out << YAML::Key << "compat" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "delta1_us" << YAML::Value << c.compat.delta1_us;
  out << YAML::Key << "delta2_us" << YAML::Value << c.compat.delta2_us;
  out << YAML::Key << "transfer_bytes_per_us" << YAML::Value << c.compat.transfer_bytes_per_us;
  out << YAML::Key << "init_offset_us" << YAML::Value << c.compat.init_offset_us;
  out << YAML::EndMap << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

}  // namespace placeto
