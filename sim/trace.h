// Writes an ExecutionTrace in the Chrome trace-event format (opens in Perfetto and
// chrome://tracing): one process per device with a "compute" and an "outgoing bus" thread.
#pragma once

#include <string>

#include "common/json_util.h"
#include "sim/cluster.h"
#include "sim/graph.h"
#include "sim/simulator.h"

namespace placeto {

Json trace_to_chrome_json(const Graph& g, const Cluster& c, const ExecutionTrace& trace);
void save_chrome_trace(const Graph& g, const Cluster& c, const ExecutionTrace& trace,
                       const std::string& path);

}  // namespace placeto
