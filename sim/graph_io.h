// The JSON files of graphs and placements (see docs/FORMATS.md).
//
// Graph: {"format": "placeto-graph", "version": 1, "name": str?, "nodes": [{"name": str,
//   "op": str?, "cost_us": number, "out_bytes": [int]?, "param_bytes": int?}],
//   "edges": [{"src": str, "dst": str, "out": int?}]}
// Placement: {"devices": D, "placement": {"<node name>": device}}
#pragma once

#include <string>

#include "common/json_util.h"
#include "sim/graph.h"

namespace placeto {

constexpr int kGraphFormatVersion = 1;

// Throws InputError naming the file, the node or edge, and the value.
Graph load_graph(const std::string& path);
Graph graph_from_json(const Json& doc, const std::string& source);
Json graph_to_json(const Graph& g);
void save_graph(const Graph& g, const std::string& path);  // atomic

Placement load_placement(const std::string& path, const Graph& g);
Placement placement_from_json(const Json& doc, const Graph& g, const std::string& source);
Json placement_to_json(const Graph& g, const Placement& p);
void save_placement(const Graph& g, const Placement& p, const std::string& path);  // atomic

}  // namespace placeto
