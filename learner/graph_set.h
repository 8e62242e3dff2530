// The graphs a run trains or evaluates on: a generated family's split (manifest.json) or,
// for a directory without a manifest, every *.json graph in it (sorted by file name).
#pragma once

#include <string>
#include <vector>

#include "sim/graph.h"

namespace placeto {

struct NamedGraph {
  std::string name;  // the file's stem: stable across runs and machines
  std::string path;
  Graph graph;
};

// split: "train", "test" or "all".  Throws InputError naming the directory/file.
std::vector<NamedGraph> load_graph_split(const std::string& dir, const std::string& split);

}  // namespace placeto
