#include "sim/trace.h"

#include "common/files.h"

namespace placeto {

Json trace_to_chrome_json(const Graph& g, const Cluster& c, const ExecutionTrace& trace) {
  Json events = Json::array();
  for (int d = 0; d < c.num_devices(); ++d) {
    events.push_back({{"ph", "M"},
                      {"name", "process_name"},
                      {"pid", d},
                      {"tid", 0},
                      {"args", {{"name", c.devices[d].name}}}});
    events.push_back({{"ph", "M"},
                      {"name", "thread_name"},
                      {"pid", d},
                      {"tid", 0},
                      {"args", {{"name", "compute"}}}});
    events.push_back({{"ph", "M"},
                      {"name", "thread_name"},
                      {"pid", d},
                      {"tid", 1},
                      {"args", {{"name", "outgoing bus"}}}});
  }
  for (const auto& op : trace.ops) {
    Json args = {{"op_type", g.op_type(op.op)}, {"cost_us", g.cost_us(op.op)}};
    events.push_back({{"ph", "X"},
                      {"name", g.node_name(op.op)},
                      {"cat", "op"},
                      {"pid", op.device},
                      {"tid", 0},
                      {"ts", op.start_us},
                      {"dur", op.end_us - op.start_us},
                      {"args", args}});
  }
  for (const auto& tr : trace.transfers) {
    Json dsts = Json::array();
    for (NodeId v : tr.dsts) dsts.push_back(g.node_name(v));
    events.push_back({{"ph", "X"},
                      {"name", g.node_name(tr.src) + ":" + std::to_string(tr.out)},
                      {"cat", "transfer"},
                      {"pid", tr.device},
                      {"tid", 1},
                      {"ts", tr.start_us},
                      {"dur", tr.end_us - tr.start_us},
                      {"args", {{"bytes", tr.bytes}, {"to", dsts}}}});
  }
  Json doc;
  doc["traceEvents"] = std::move(events);
  doc["displayTimeUnit"] = "ns";
  doc["otherData"] = {{"graph", g.name()}, {"cluster", c.name}};
  return doc;
}

void save_chrome_trace(const Graph& g, const Cluster& c, const ExecutionTrace& trace,
                       const std::string& path) {
  write_file_atomic(path, trace_to_chrome_json(g, c, trace).dump() + "\n");
}

}  // namespace placeto
