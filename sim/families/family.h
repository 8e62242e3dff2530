// Graph families: generators of training-step graphs whose architectures are sampled from
// ENAS-style search spaces, like the Placeto paper's "cifar10", "ptb" and "nmt" families
// (docs/FAMILIES.md), and the manifest that splits a generated family into train and test
// graphs.  Generation is a pure function of (spec, index, seed): the same inputs give
// byte-identical files on a given platform.  Thread-safe: no shared state.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/graph.h"

namespace placeto {

// What to generate.  Zero fields take the family's default (default_family_spec()).
struct FamilySpec {
  std::string family;           // "cifar10", "ptb", "nmt", "layered" or (evaluation only) "linalg"
  std::string profile = "k80";  // cost-model profile the op costs are computed for
  int batch = 0;                // images (cifar10) or sequences (ptb, nmt) per step
  int width = 0;                // first-stage channels (cifar10) or hidden size (ptb, nmt)
  int cell_nodes = 0;           // nodes per cell (ENAS B)
  int steps = 0;                // unrolled time steps (ptb; nmt: source and target length)
  int layers = 0;  // normal cells per stage (cifar10) or stacked cells (ptb, nmt decoder)
  int vocab = 0;   // vocabulary size (ptb, nmt)
};

// The training families: cifar10, ptb, nmt, layered.
std::vector<std::string> family_names();
// Families for evaluation only, never trained on: "linalg" (tiled Cholesky, LU and stencil
// task graphs; width = tile size, steps = tiles per side, 0 = drawn per graph; the other
// fields are unused).
bool evaluation_only_family(const std::string& family);
// The defaults of a family; InputError names an unknown family and lists the known ones.
FamilySpec default_family_spec(const std::string& family);
// Fills zero fields from the family's defaults and checks ranges (InputError).
FamilySpec resolve_family_spec(const FamilySpec& spec);

// Graph `index` of the family for `seed`, named "<family>_<index>".
Graph generate_graph(const FamilySpec& spec, int index, uint64_t seed);

// A generated family on disk: DIR/manifest.json and DIR/<family>_<i>.json.
struct FamilyManifest {
  std::string family;
  uint64_t seed = 0;
  int count = 0;
  std::string profile;
  std::vector<std::string> train;  // paths as written in the manifest (relative to DIR)
  std::vector<std::string> test;
};

// Writes `count` graphs and the manifest; `test_count` graphs (chosen by a permutation of
// the seed) form the test split, the rest the train split.  Files are written atomically.
FamilyManifest generate_family(const FamilySpec& spec, int count, uint64_t seed,
                               const std::string& out_dir, int test_count);
// The default split of the paper: a quarter of the graphs (8 of 32) for testing.
int default_test_count(int count);

// Reads DIR/manifest.json (or a manifest file path); errors name the file and the field.
FamilyManifest load_family_manifest(const std::string& dir_or_file);
// The manifest's paths resolved against its directory.
std::vector<std::string> manifest_paths(const std::string& dir_or_file,
                                        const std::vector<std::string>& files);

}  // namespace placeto
