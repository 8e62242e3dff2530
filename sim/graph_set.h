// The graphs a command works on: a generated family's split (manifest.json) or, for a
// directory without a manifest, every *.json graph in it (sorted by file name).  The one
// loader behind `placeto compare`, `placeto eval` and the trainer.
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

// split: "train", "test" or "all" (a directory without a manifest has only "all", and every
// split means all of it).  Throws InputError naming the directory or file.
std::vector<NamedGraph> load_graph_split(const std::string& dir, const std::string& split);

}  // namespace placeto
