// PyTorch module paths of ONNX node names, and the grouping of an imported graph by module
// (`placeto import --groups by-module`, `placeto export --format torch-device-map`).
//
// torch.onnx.export names a node after the module scope it ran in: "/layer1/layer1.0/conv1/Conv"
// is the Conv of module "layer1.0.conv1".  module_paths() turns such names into the dotted paths
// of `model.named_modules()`:
//  * the name is split at '/'; the last component is the op (dropped), the others are scopes;
//  * a component that starts with the previous one + "." replaces it ("layer1", "layer1.0" ->
//    "layer1.0"); otherwise it is appended with a "." ("layer1.0", "conv1" -> "layer1.0.conv1");
//  * a component "relu_1", "relu_2" is the 2nd, 3rd call of module "relu" when a node of the
//    same parent module has the component "relu": the suffix is stripped;
//  * a name with a single component ("/Flatten") is an op of the root module "";
//  * a name that does not start with '/' ("Conv_3", from another exporter or from PyTorch code
//    outside any module) has no scope.
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/coarsen.h"
#include "sim/graph.h"
#include "sim/op_origin.h"

namespace placeto {

struct ModulePath {
  bool scoped = false;  // false: the name carries no module scope (path is then "")
  std::string path;     // dotted module path; "" = the root module
};

// One entry per name.  Suffix stripping looks at all `names` together (the siblings decide
// whether "relu_1" is a second call of "relu"), so pass every node name of the model that
// matters, e.g. the ONNX nodes that became ops.
std::vector<ModulePath> module_paths(const std::vector<std::string>& names);

// "layer1.0.conv1" -> "layer1.0"; "fc" -> ""; "" -> "" (the root has no parent).
std::string parent_module(const std::string& path);
// Number of components: "" -> 0, "fc" -> 1, "layer1.0.conv1" -> 3.
int module_depth(const std::string& path);
// True when `module` is `ancestor` or lies inside it ("" contains every module).
bool module_contains(const std::string& ancestor, const std::string& module);

// The by-module grouping of an imported graph (docs/IMPORT.md "Grouping by module").
struct ModuleGrouping {
  CoarseGraph coarse;  // the coarse graph; coarse.group[op] is the op's node in it
  // Per coarse node: the module path ("" = root), "<module>/grad" for the backward and update
  // ops of a module (--training), or "input:<name>" for a graph input.
  std::vector<std::string> labels;
  // Modules whose ops joined their parent's group to break a cycle between groups, in the order
  // they were removed.
  std::vector<std::string> collapsed;
  int unscoped_ops = 0;  // ops whose ONNX node name has no module scope (put in the root)
};

// Groups the ops of `g` (an imported graph, `origins` one per op) by module: every op goes to
// the group of its deepest ancestor module still in the set S (initially every module of an
// op and their ancestors), graph inputs to groups of their own, grad and update ops to
// "<module>/grad".  While the group graph has a cycle, the deepest modules of each cyclic
// strongly connected component leave S (their ops fall to the parent); the root always stays.
// Throws InputError naming `source` when no op's ONNX node name has a module scope (not a
// PyTorch export, or one with names like "Conv_3"); the message gives an example name.
ModuleGrouping group_by_module(const Graph& g, const std::vector<OpOrigin>& origins,
                               const std::string& source);

}  // namespace placeto
