#include "sim/cluster.h"

#include <algorithm>

#include "common/error.h"
#include "sim/cost_model.h"

namespace placeto {

bool Cluster::has_memory_limits() const {
  for (const auto& d : devices)
    if (d.memory_bytes > 0) return true;
  return false;
}

double Cluster::transfer_time_us(int64_t bytes, int src, int dst) const {
  if (src == dst) return 0;
  if (mode == SimMode::kCompatible)
    return static_cast<double>(bytes) / compat.transfer_bytes_per_us;
  PLACETO_CHECK_EQ(links.size(), devices.size() * devices.size());  // derive_links() ran
  const LinkSpec& l = link(src, dst);
  return l.latency_us + static_cast<double>(bytes) / l.bytes_per_us;
}

double Cluster::transfer_busy_us(int64_t bytes, int src, int dst) const {
  if (src == dst) return 0;
  if (mode == SimMode::kCompatible)
    return static_cast<double>(bytes) / compat.transfer_bytes_per_us + compat.delta2_us;
  PLACETO_CHECK_EQ(links.size(), devices.size() * devices.size());  // derive_links() ran
  return static_cast<double>(bytes) / link(src, dst).bytes_per_us + hetero.transfer_gap_us;
}

void Cluster::derive_links() {
  const int d = num_devices();
  links.assign(static_cast<size_t>(d) * d, LinkSpec{});
  std::vector<const DeviceProfile*> prof(d);
  for (int i = 0; i < d; ++i) prof[i] = &device_profile(devices[i].profile);
  for (int s = 0; s < d; ++s)
    for (int t = 0; t < d; ++t) {
      if (s == t) continue;
      const DeviceProfile& a = *prof[s];
      const DeviceProfile& b = *prof[t];
      const bool same_node = devices[s].node == devices[t].node;
      // Bytes/s -> bytes/us.
      const double bw = same_node ? std::min(a.intra_node_bandwidth, b.intra_node_bandwidth)
                                  : std::min(a.inter_node_bandwidth, b.inter_node_bandwidth);
      const double lat = same_node ? std::max(a.intra_node_latency_us, b.intra_node_latency_us)
                                   : std::max(a.inter_node_latency_us, b.inter_node_latency_us);
      links[s * d + t] = LinkSpec{bw * 1e-6, lat};
    }
  for (const LinkOverride& o : link_overrides) {
    if (o.src < 0 || o.src >= d || o.dst < 0 || o.dst >= d || o.src == o.dst)
      throw InputError("cluster '" + name + "': link override " + std::to_string(o.src) + " -> " +
                       std::to_string(o.dst) + " must join two different devices in [0, " +
                       std::to_string(d) + ")");
    links[o.src * d + o.dst] = o.link;
    if (o.both_directions) links[o.dst * d + o.src] = o.link;
  }
}

Cluster default_cluster(int num_devices) {
  PLACETO_CHECK_GE(num_devices, 1);
  Cluster c;
  c.devices.resize(num_devices);
  for (int i = 0; i < num_devices; ++i) c.devices[i].name = "gpu" + std::to_string(i);
  return c;
}

Cluster profile_cluster(const std::string& profile, int nodes, int per_node,
                        Contention contention) {
  PLACETO_CHECK_GE(nodes, 1);
  PLACETO_CHECK_GE(per_node, 1);
  const DeviceProfile& p = device_profile(profile);
  Cluster c;
  c.name = std::to_string(nodes) + "x" + std::to_string(per_node) + "_" + profile;
  c.mode = SimMode::kHeterogeneous;
  c.hetero.contention = contention;
  for (int n = 0; n < nodes; ++n)
    for (int i = 0; i < per_node; ++i) {
      DeviceSpec s;
      s.name = "gpu" + std::to_string(n * per_node + i);
      s.memory_bytes = p.memory_bytes;
      s.profile = profile;
      s.node = n;
      c.devices.push_back(s);
    }
  c.derive_links();
  return c;
}

}  // namespace placeto
