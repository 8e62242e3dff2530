#include "sim/device_profile_yaml.h"

#include <cmath>
#include <cstdio>

#include "common/error.h"
#include "common/yaml_util.h"

namespace placeto {
namespace {

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

double positive(const YamlField& f, const std::string& key, double fallback, bool allow_zero) {
  if (!f.has(key)) return fallback;
  double v = f.at(key).as_double();
  if (!std::isfinite(v) || v < 0 || (!allow_zero && v == 0))
    f.at(key).fail("must be a " + std::string(allow_zero ? "non-negative" : "positive") +
                   " number, got " + f.at(key).as_string());
  return v;
}

DeviceProfile from_yaml(const YamlField& root) {
  if (!root.is_map()) root.fail("a device profile file must be a mapping");
  root.check_keys({"format", "version", "name", "base", "peak_flops", "mem_bandwidth",
                   "compute_efficiency", "memory_efficiency", "launch_overhead_us", "memory_bytes",
                   "intra_node_bandwidth", "intra_node_latency_us", "inter_node_bandwidth",
                   "inter_node_latency_us", "op_classes", "fitted"});
  if (!root.has("format") || root.at("format").as_string() != "placeto-device-profile")
    root.at("format").fail("must be 'placeto-device-profile'");
  if (root.has("version") && root.at("version").as_int() != 1)
    root.at("version").fail("unsupported version " + root.at("version").as_string() +
                            " (this build reads 1)");
  DeviceProfile p;
  if (root.has("base")) {
    try {
      p = device_profile(root.at("base").as_string());
    } catch (const InputError& e) {
      root.at("base").fail(e.what());
    }
  } else {
    for (const char* key : {"peak_flops", "mem_bandwidth"})
      if (!root.has(key)) root.fail(std::string("needs '") + key + "' (or a 'base' profile)");
  }
  p.op_classes.clear();
  root.get("name", &p.name);
  if (p.name.empty()) root.fail("needs a 'name'");
  p.peak_flops = positive(root, "peak_flops", p.peak_flops, false);
  p.mem_bandwidth = positive(root, "mem_bandwidth", p.mem_bandwidth, false);
  p.compute_efficiency = positive(root, "compute_efficiency", p.compute_efficiency, false);
  p.memory_efficiency = positive(root, "memory_efficiency", p.memory_efficiency, false);
  p.launch_overhead_us = positive(root, "launch_overhead_us", p.launch_overhead_us, true);
  p.memory_bytes = positive(root, "memory_bytes", p.memory_bytes, true);
  p.intra_node_bandwidth = positive(root, "intra_node_bandwidth", p.intra_node_bandwidth, true);
  p.intra_node_latency_us = positive(root, "intra_node_latency_us", p.intra_node_latency_us, true);
  p.inter_node_bandwidth = positive(root, "inter_node_bandwidth", p.inter_node_bandwidth, true);
  p.inter_node_latency_us = positive(root, "inter_node_latency_us", p.inter_node_latency_us, true);
  if (root.has("op_classes")) {
    const YamlField classes = root.at("op_classes");
    if (!classes.is_map()) classes.fail("must be a mapping from op class to its rates");
    for (const auto& item : classes.node()) {
      const std::string name = item.first.as<std::string>();
      const YamlField c = classes.at(name);
      if (!c.is_map()) c.fail("must be a mapping {flops_per_s, bytes_per_s, overhead_us}");
      c.check_keys({"flops_per_s", "bytes_per_s", "overhead_us"});
      for (const char* key : {"flops_per_s", "bytes_per_s"})
        if (!c.has(key)) c.fail(std::string("needs '") + key + "'");
      OpClassRate r;
      r.flops_per_s = positive(c, "flops_per_s", 0, false);
      r.bytes_per_s = positive(c, "bytes_per_s", 0, false);
      r.overhead_us = positive(c, "overhead_us", 0, true);
      p.op_classes[name] = r;
    }
  }
  return p;
}

std::string number(double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.6g", v);
  return buf;
}

}  // namespace

DeviceProfile load_device_profile_file(const std::string& path) {
  return from_yaml(YamlField(load_yaml_file(path), path, ""));
}

DeviceProfile device_profile_from_yaml_text(const std::string& text, const std::string& source) {
  return from_yaml(YamlField(parse_yaml_text(text, source), source, ""));
}

DeviceProfile resolve_device_profile(const std::string& name_or_path) {
  if (ends_with(name_or_path, ".yaml") || ends_with(name_or_path, ".yml"))
    return load_device_profile_file(name_or_path);
  return device_profile(name_or_path);
}

std::string device_profile_to_yaml(const DeviceProfile& p, const std::string& fitted_notes) {
  std::string s = "format: placeto-device-profile\nversion: 1\nname: " + p.name + "\n";
  s += "peak_flops: " + number(p.peak_flops) + "\n";
  s += "mem_bandwidth: " + number(p.mem_bandwidth) + "\n";
  s += "compute_efficiency: " + number(p.compute_efficiency) + "\n";
  s += "memory_efficiency: " + number(p.memory_efficiency) + "\n";
  s += "launch_overhead_us: " + number(p.launch_overhead_us) + "\n";
  s += "memory_bytes: " + number(p.memory_bytes) + "\n";
  s += "intra_node_bandwidth: " + number(p.intra_node_bandwidth) + "\n";
  s += "intra_node_latency_us: " + number(p.intra_node_latency_us) + "\n";
  s += "inter_node_bandwidth: " + number(p.inter_node_bandwidth) + "\n";
  s += "inter_node_latency_us: " + number(p.inter_node_latency_us) + "\n";
  if (!p.op_classes.empty()) {
    s += "op_classes:\n";
    for (const auto& [name, r] : p.op_classes)
      s += "  " + name + ": {flops_per_s: " + number(r.flops_per_s) +
           ", bytes_per_s: " + number(r.bytes_per_s) + ", overhead_us: " + number(r.overhead_us) +
           "}\n";
  }
  if (!fitted_notes.empty()) s += "fitted: " + fitted_notes + "\n";
  return s;
}

}  // namespace placeto
