// The placers that cut the sequence of training-op groups (contiguous.h) into blocks, one per
// device: `partition`, the dynamic program over contiguous splits, and `m-topo`, Baechi's
// memory-constrained topological placer (Jeon et al., SoCC 2020).
#include <algorithm>

#include "sim/placers/contiguous.h"
#include "sim/placers/memory.h"
#include "sim/placers/methods.h"

namespace placeto {
namespace {

class PartitionPlacer : public Placer {
 public:
  std::string name() const override { return "partition"; }
  Placement place(const Graph& g, const Cluster& c, const PlacerOptions&) const override {
    return contiguous_partition(g, c);
  }
};

// m-TOPO: items in topological order fill device 0 up to its limit, then device 1, ...; a
// device's limit is the balanced share (the whole graph's need on one device / D) or its
// capacity if smaller, and the last device's is its capacity.  An item goes only onto a
// device with room: when the current device has none, the first device that has room takes
// it; when none has, the device it overflows least (relative to its capacity).  Then
// repair_memory, then partition's answer if that fits where this does not (with a note).
class MtopoPlacer : public Placer {
 public:
  std::string name() const override { return "m-topo"; }
  Placement place(const Graph& g, const Cluster& c, const PlacerOptions& o) const override {
    const int num_dev = c.num_devices();
    Placement p(num_dev, g.num_nodes(), 0);
    if (g.num_nodes() == 0 || num_dev == 1) return p;
    const OpSequence seq = training_op_sequence(g);
    const ItemMemory empty(g, c, seq);
    ItemMemory whole = empty;
    for (int i = 0; i < seq.size(); ++i) whole.add(i);
    const double share = static_cast<double>(whole.need_bytes()) / num_dev;
    std::vector<ItemMemory> mem(num_dev, empty);
    std::vector<double> cap(num_dev), limit(num_dev);
    for (int d = 0; d < num_dev; ++d) {
      cap[d] = device_capacity_bytes(c, d);
      limit[d] = d + 1 < num_dev ? std::min(cap[d], share) : cap[d];
    }
    std::vector<char> used(num_dev, 0);
    int current = 0;
    for (int i = 0; i < seq.size(); ++i) {
      while (current + 1 < num_dev && used[current] &&
             static_cast<double>(mem[current].need_with(i)) > limit[current])
        ++current;
      int d = current;
      if (static_cast<double>(mem[d].need_with(i)) > cap[d]) {
        d = -1;
        double least = 0;
        for (int k = 0; k < num_dev && d < 0; ++k)
          if (static_cast<double>(mem[k].need_with(i)) <= cap[k]) d = k;
        for (int k = 0; k < num_dev && d < 0; ++k) {
          const double rel = static_cast<double>(mem[k].need_with(i)) / cap[k];
          if (k == 0 || rel < least) least = rel, d = k;
        }
      }
      mem[d].add(i);
      used[d] = 1;
      for (NodeId v : seq.items[i]) p.device[v] = d;
    }
    repair_memory(g, c, &p, o.repair_deadline);
    return fall_back_to_partition(g, c, std::move(p), name(), o.stats);
  }
};

}  // namespace

std::unique_ptr<Placer> make_partition_placer() { return std::make_unique<PartitionPlacer>(); }
std::unique_ptr<Placer> make_mtopo_placer() { return std::make_unique<MtopoPlacer>(); }

}  // namespace placeto
