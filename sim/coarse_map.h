// The group map file of a coarsening (sim/coarsen.h): which group, i.e. which node of the
// coarse graph, every op of the fine graph belongs to, and for imported models where each fine
// op comes from in the ONNX file.  It is what maps a placement of the coarse graph back to
// every op and to the user's ONNX nodes (`placeto place --ungroup`, `placeto coarsen
// --placement`).  Pure functions; thread-safe.
//
// File (docs/FAMILIES.md "Map file"):
//   {"format": "placeto-coarse-map", "version": 1, "graph": fine name, "coarse_graph": name,
//    "groups": K, "map": {"<op>": group},
//    "origins": {"<op>": {"role": "grad", "name": "<ONNX node name>", "node": 12}}}
// "origins" is optional (written by `placeto import --groups`); role is one of input,
// forward, grad, update; "node" is the index in the ONNX graph's node list (absent for inputs).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/json_util.h"
#include "sim/coarsen.h"
#include "sim/graph.h"
#include "sim/op_origin.h"

namespace placeto {

struct CoarseMap {
  std::string graph;              // name of the fine graph it groups
  std::string coarse_graph;       // name of the coarse graph
  int groups = 0;                 // K
  std::vector<int32_t> group;     // per fine op (NodeId): its group in [0, K)
  std::vector<OpOrigin> origins;  // per fine op; empty when the file has none
};

// The default names of the files written beside a coarse graph `C.json`: companion_path(
// "C.json", "map") is "C.map.json" (the map), "fine" gives "C.fine.json" (the fine graph or
// placement).  A path not ending in ".json" gets ".<tag>.json" appended.
std::string companion_path(const std::string& path, const std::string& tag);

// REQUIRES: origins is null or has one entry per op of `fine`.
Json coarse_map_to_json(const Graph& fine, const CoarseGraph& c,
                        const std::vector<OpOrigin>* origins = nullptr);
void save_coarse_map(const Graph& fine, const CoarseGraph& c, const std::string& path,
                     const std::vector<OpOrigin>* origins = nullptr);  // atomic

// Reads a map file for `fine`.  InputError naming the file and the field when the map is for
// another graph (its "graph" is not fine's name), names an op `fine` lacks, leaves an op of
// `fine` without a group, has a group outside [0, K) or a group without ops, or a bad origin.
CoarseMap read_coarse_map(const std::string& path, const Graph& fine);

// The CoarseGraph of `fine` under a map read from `path`.  Throws InputError if the grouping
// is cyclic.
CoarseGraph load_coarse_map(const std::string& path, const Graph& fine);

// Checks that `map` (read from map_path) is the grouping behind `coarse` (read from
// coarse_path): same coarse graph name, K equal to its node count, and group i rebuilt from
// the fine ops is the coarse graph's node i (same name).  Returns the rebuilt CoarseGraph,
// whose group ids index `coarse`'s nodes.  InputError naming both files otherwise.
CoarseGraph match_coarse_graph(const CoarseMap& map, const std::string& map_path, const Graph& fine,
                               const Graph& coarse, const std::string& coarse_path);

// A fine placement per ONNX node: graph inputs first, then the ONNX nodes in file order, each
// {"node": i, "name": ONNX name, "op": graph op, "forward": d[, "grad": d][, "update": d]} or
// {"input": name, "op": graph op, "forward": d}.  REQUIRES: one origin per op of `fine`.
Json placement_by_onnx_node(const Graph& fine, const std::vector<OpOrigin>& origins,
                            const Placement& p);

}  // namespace placeto
