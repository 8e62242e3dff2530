// `placeto export`: a placement of an imported ONNX model in forms a framework applies
// (docs/IMPORT.md "Exporting a placement", docs/FORMATS.md):
//  * annotate_onnx: the model with a device on every node that has an op (NodeProto field 9,
//    metadata_props of ONNX >= 1.16, written as an unknown field) and the whole placement in
//    the model's metadata_props (key "placeto.placement"); weights untouched;
//  * torch_device_map: PyTorch module path -> device, from the module scopes in node names;
//  * pipeline_stages: the devices as pipeline stages when the forward placement allows it.
// The placement is a fine placement of the model's imported graph (`placeto place`, or
// `place --ungroup`).  Ops are matched to ONNX nodes by re-importing the model (every op
// records its ONNX node, sim/op_origin.h); a placement's `onnx_nodes`, when present, is
// checked against the model (node index and name) and against `placement`.
// Pure functions of their inputs; thread-safe.
#pragma once

#include <string>
#include <vector>

#include "common/json_util.h"
#include "sim/graph.h"
#include "sim/onnx/onnx_import.h"

namespace placeto {

struct ModelPlacement {
  std::string model_path, placement_path;
  std::string model_bytes;     // the ONNX file as read
  ImportResult model;          // the model re-imported with --training (names as `placeto import`)
  int num_devices = 0;         // the placement's "devices"
  std::vector<int> op_device;  // per op of model.graph; -1: not placed (grad/update ops of an
                               // inference placement)
  bool training = false;       // the placement places the grad and update ops
  std::vector<int> node_device;  // per ONNX node (graph.node index): its forward op's device,
                                 // -1 for nodes folded at import (no op)
};

// Reads `placement_path` for the model at `model_path` (`data_inputs` as given to `placeto
// import --inputs`).  InputError naming the file and the field when the placement names an op
// the model lacks (a placement of another model), leaves a forward op unplaced, places some
// but not all grad/update ops, has a device outside [0, devices) or, when
// `cluster_devices` > 0, outside the cluster, or has `onnx_nodes` that disagree with the model
// or with `placement`.
ModelPlacement read_model_placement(const std::string& placement_path,
                                    const std::string& model_path,
                                    const std::vector<std::string>& data_inputs,
                                    int cluster_devices);

// "cuda:" + 3 -> "cuda:3".
std::string device_string(const std::string& prefix, int device);

// The serialised model with every node that has an op annotated (metadata_props entry
// "device" -> device_string) and model metadata "placeto.placement" -> JSON {node: device}
// (key: the node's name, or "#<index>" when the name is empty or repeated).  Nodes folded at
// import get no device.
std::string annotate_onnx(const ModelPlacement& p, const std::string& device_prefix);

// The PyTorch device map (docs/FORMATS.md "Torch device map").  Every module with forward ops
// gets the device most of them run on (all of them for a by-module placement; modules where
// they differ are listed in "inexact_modules"); the root "" always has a device.  InputError
// naming the model when no op node name carries a module scope.
struct TorchDeviceMap {
  Json doc;                         // the file's content
  std::vector<std::string> module;  // per op of p.model.graph: its module path
  std::vector<int> module_device;   // per op: the device of its module (inputs: as placed)
  int inexact_modules = 0;
  int unscoped_ops = 0;
};
TorchDeviceMap torch_device_map(const ModelPlacement& p, const std::string& device_prefix);

// The forward placement as pipeline stages (docs/FORMATS.md "Stages").  InputError naming the
// placement and two pairs of ops when the devices' forward ops do not form a pipeline (the
// quotient graph over devices has a cycle).
Json pipeline_stages(const ModelPlacement& p, const std::string& device_prefix);

}  // namespace placeto
