#!/usr/bin/python3
"""Applies a placement written by `placeto export --format torch-device-map` to a PyTorch model.

    from placeto_device_map import apply_device_map
    model = torchvision.models.resnet18()
    apply_device_map(model, "map.json")          # modules on their GPUs, hooks installed
    out = model(x)                                # x may be on any device

Every module runs on the device of its deepest mapped ancestor (itself included; "" is the
root).  apply_device_map() moves the mapped modules, parents first, with `.to(device)`, and for
every module whose device differs from its parent's registers a forward pre-hook that moves its
tensor inputs to its device and a forward hook that moves its tensor outputs back to the
parent's device, so that the parent's own ops (e.g. the residual Add of a ResNet block) find
their operands where they run.  Tensors in keyword arguments are not moved (torch 1.13 hooks
do not see them).

`remap` rewrites device names before use, e.g. {"cuda:0": "cpu", "cuda:1": "cpu"} to run a
multi-GPU map on a machine without GPUs (outputs are then those of the unplaced model).

    python3 launch/placeto_device_map.py check --map map.json --model torchvision:resnet18

builds the model, checks that every mapped module exists, applies the map with every device
remapped to the CPU and compares one forward pass with the unplaced model's.
"""
import argparse
import json
import sys

import torch


def load_device_map(device_map_json):
    """The map document from a path or an already loaded dict; ValueError naming the file."""
    if isinstance(device_map_json, dict):
        doc, source = device_map_json, "device map"
    else:
        source = str(device_map_json)
        with open(source) as f:
            doc = json.load(f)
    if doc.get("format") != "placeto-torch-device-map":
        raise ValueError("%s: format: expected placeto-torch-device-map, got %r"
                         % (source, doc.get("format")))
    if doc.get("version") != 1:
        raise ValueError("%s: version: expected 1, got %r" % (source, doc.get("version")))
    if not isinstance(doc.get("device_map"), dict) or "" not in doc["device_map"]:
        raise ValueError("%s: device_map: expected an object with the root module \"\"" % source)
    return doc, source


def _parent(name):
    return name.rpartition(".")[0] if name else None


def _depth(name):
    return 0 if name == "" else name.count(".") + 1


def module_devices(model, device_map_json, remap=None):
    """Device (a string, after `remap`) of every module of model.named_modules()."""
    doc, source = load_device_map(device_map_json)
    mapped = doc["device_map"]
    modules = dict(model.named_modules())
    unknown = [m for m in mapped if m not in modules]
    if unknown:
        raise ValueError("%s: device_map: module %r is not in the model (%d unknown; the map of "
                         "another model?)" % (source, unknown[0], len(unknown)))
    remap = remap or {}
    out = {}
    for name in sorted(modules, key=_depth):  # parents first
        if name in mapped:
            out[name] = remap.get(mapped[name], mapped[name])
        else:
            out[name] = out[_parent(name)]
    return out


def _move(value, device):
    if torch.is_tensor(value):
        return value.to(device)
    if isinstance(value, tuple):
        return tuple(_move(v, device) for v in value)
    if isinstance(value, list):
        return [_move(v, device) for v in value]
    if isinstance(value, dict):
        return {k: _move(v, device) for k, v in value.items()}
    return value


def apply_device_map(model, device_map_json, remap=None):
    """Places `model` as the map says; returns {module name: device string} for every module.

    The hook handles are kept in `model._placeto_hook_handles` (call .remove() on each to undo
    the hooks; the modules stay where they were moved).
    """
    doc, _ = load_device_map(device_map_json)
    devices = module_devices(model, doc, remap)
    modules = dict(model.named_modules())
    order = doc.get("order") or sorted(doc["device_map"], key=_depth)
    for name in sorted(order, key=_depth):  # parents before children
        modules[name].to(torch.device(devices[name]))
    handles = []
    for name, module in modules.items():
        parent = _parent(name)
        if parent is not None and devices[parent] == devices[name]:
            continue
        device = torch.device(devices[name])
        handles.append(module.register_forward_pre_hook(
            lambda mod, args, device=device: _move(args, device)))
        if parent is not None:
            back = torch.device(devices[parent])
            handles.append(module.register_forward_hook(
                lambda mod, args, out, back=back: _move(out, back)))
    model._placeto_hook_handles = handles
    return devices


def _build(spec):
    kind, _, name = spec.partition(":")
    if kind != "torchvision":
        raise SystemExit("--model: expected torchvision:<name>, got %r" % spec)
    import torchvision
    return getattr(torchvision.models, name)(weights=None)


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="command", required=True)
    c = sub.add_parser("check", help="apply a map on the CPU and compare with the unplaced model")
    c.add_argument("--model", required=True, help="torchvision:<name>")
    c.add_argument("--map", required=True)
    c.add_argument("--input-shape", default="1,3,224,224")
    a = p.parse_args(argv)
    torch.manual_seed(0)
    reference = _build(a.model).eval()
    torch.manual_seed(0)
    placed = _build(a.model).eval()
    doc, _ = load_device_map(a.map)
    cpu = {d: "cpu" for d in doc["device_map"].values()}
    devices = apply_device_map(placed, doc, remap=cpu)
    x = torch.randn(*[int(s) for s in a.input_shape.split(",")])
    with torch.no_grad():
        same = torch.equal(reference(x), placed(x))
    print(json.dumps({"modules": len(devices), "mapped": len(doc["device_map"]),
                      "devices": sorted(set(doc["device_map"].values())), "outputs_equal": same}))
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
