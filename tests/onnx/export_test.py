#!/usr/bin/python3
"""End-to-end test of `placeto export` on a real PyTorch model (run by CTest, label integration).

    /usr/bin/python3 tests/onnx/export_test.py --bin BUILD/bin --work DIR --model resnet18

Exports the model (training mode, weights included) to ONNX, runs as processes
`placeto import --training --batch 8 --groups by-module`, `placeto place --method anneal
--ungroup` and `placeto export` in the three formats, and checks the results with ONNX and
PyTorch: the annotated model passes onnx.checker, every node with an op carries its device
(NodeProto field 9 and the model-level entry), initializers are byte-identical; the device map
names real modules, covers every parameter, and applied to a fresh model (devices remapped to
the CPU) gives the unplaced model's outputs; stages are a valid pipeline, and a placement
built to be non-contiguous is refused.  Bad inputs exit 2 and leave no output.
"""
import argparse
import json
import os
import subprocess
import sys

import onnx
import torch
import torch.nn as nn
import torchvision

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "launch"))
import placeto_device_map  # noqa: E402

FAILURES = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        FAILURES.append(what)


def build(name):
    torch.manual_seed(0)
    if name == "resnet18":
        return torchvision.models.resnet18(weights=None), torch.randn(1, 3, 64, 64)
    if name == "transformer":
        layer = nn.TransformerEncoderLayer(d_model=64, nhead=4, dim_feedforward=128, dropout=0.1)
        return nn.TransformerEncoder(layer, num_layers=2), torch.randn(16, 1, 64)
    raise SystemExit("unknown model " + name)


def run(args, expect=0):
    r = subprocess.run(args, capture_output=True, text=True)
    if r.returncode != expect:
        print(" ".join(args), "\n", r.stdout, r.stderr)
    check(r.returncode == expect, "%s exits %d (got %d)" % (args[1], expect, r.returncode))
    return r


def varint(buf, i):
    value, shift = 0, 0
    while True:
        b = buf[i]
        value |= (b & 0x7F) << shift
        i += 1
        shift += 7
        if b < 0x80:
            return value, i


def node_metadata(node):
    """metadata_props (field 9) of a NodeProto, parsed from its wire format: ONNX 1.12 has no
    such field and keeps it as an unknown field."""
    buf, i, props = node.SerializeToString(), 0, {}
    while i < len(buf):
        key, i = varint(buf, i)
        field, wire = key >> 3, key & 7
        if wire == 0:
            _, i = varint(buf, i)
        elif wire == 2:
            n, i = varint(buf, i)
            if field == 9:
                entry = onnx.StringStringEntryProto()
                entry.ParseFromString(buf[i:i + n])
                props[entry.key] = entry.value
            i += n
        elif wire == 5:
            i += 4
        elif wire == 1:
            i += 8
        else:
            raise ValueError("wire type %d" % wire)
    return props


def producers(model, stage_of_node):
    """tensor -> stage of the op node producing it, through data Identity nodes (no stage)."""
    out = {}
    for node in model.graph.node:
        s = stage_of_node.get(node.name)
        if s is not None:
            for t in node.output:
                out[t] = s
        elif node.op_type == "Identity" and node.input and node.input[0] in out:
            out[node.output[0]] = out[node.input[0]]
    return out


def check_stages(model, stages, label):
    stage_of_node = {n: s["stage"] for s in stages["stages"] for n in s["nodes"]}
    prod = producers(model, stage_of_node)
    ok, crossing = True, {}
    for node in model.graph.node:
        s = stage_of_node.get(node.name)
        if s is None:
            continue
        for t in node.input:
            if t in prod:
                ok &= prod[t] <= s
                for k in range(prod[t], s):
                    crossing.setdefault(k, set()).add(t)
    check(ok, "%s: every stage reads only tensors of earlier stages" % label)
    outputs = {t for n in model.graph.node for t in n.output}
    listed = {sp["after_stage"]: set(sp["tensors"]) for sp in stages["splits"]}
    check(all(t in outputs for ts in listed.values() for t in ts),
          "%s: every split tensor is a tensor of the model" % label)
    # Tensors read through an Identity are listed under the producer's output name.
    check(all(len(listed.get(k, ())) >= 1 for k in crossing) and
          len(listed) == len(stages["stages"]) - 1,
          "%s: one split per stage boundary, none empty" % label)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bin", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--model", required=True)
    a = p.parse_args()
    os.makedirs(a.work, exist_ok=True)
    placeto = os.path.join(a.bin, "placeto")
    w = lambda f: os.path.join(a.work, a.model + "_" + f)  # noqa: E731

    model, x = build(a.model)
    onnx_path = w("model.onnx")
    torch.onnx.export(model, (x,), onnx_path, opset_version=13, do_constant_folding=False,
                      training=torch.onnx.TrainingMode.TRAINING)
    r = run([placeto, "import", onnx_path, "--training", "--batch", "8", "--groups", "by-module",
             "--out", w("g.json")])
    imp = json.loads(r.stdout.strip().splitlines()[-1])
    print("import:", {k: imp[k] for k in ("ops", "groups", "collapsed_modules")})
    check(imp["groups"] > 4, "by-module import has groups (%d)" % imp["groups"])
    r = run([placeto, "place", "--graph", w("g.json"), "--devices", "2", "--method", "anneal",
             "--ungroup", w("g.fine.json"), "--out", w("p.json")])
    placement = json.load(open(w("p.fine.json")))
    used = set(placement["placement"].values())

    # --format onnx
    r = run([placeto, "export", "--placement", w("p.fine.json"), "--onnx", onnx_path,
             "--format", "onnx", "--out", w("placed.onnx"), "--devices", "2"])
    original, placed = onnx.load(onnx_path), onnx.load(w("placed.onnx"))
    onnx.checker.check_model(placed)
    check(True, "onnx.checker accepts the annotated model")
    by_index = {e["node"]: e["forward"] for e in placement["onnx_nodes"] if "node" in e}
    meta = json.loads({m.key: m.value for m in placed.metadata_props}["placeto.placement"])
    ok = len(by_index) > 0
    for i, node in enumerate(placed.graph.node):
        props = node_metadata(node)
        want = "cuda:%d" % by_index[i] if i in by_index else None
        ok &= props.get("device") == want
        if want is not None:
            ok &= meta.get(node.name or "#%d" % i) == want
    check(ok, "every op node has its device in field 9 and the model entry (%d nodes)"
          % len(by_index))
    check(len(meta) == len(by_index), "the model entry lists exactly the op nodes")
    check([t.SerializeToString() for t in original.graph.initializer] ==
          [t.SerializeToString() for t in placed.graph.initializer] and
          len(original.graph.initializer) > 0, "initializers are byte-identical")

    # --format torch-device-map, with both simulations
    r = run([placeto, "export", "--placement", w("p.fine.json"), "--onnx", onnx_path,
             "--format", "torch-device-map", "--out", w("map.json"), "--graph", w("g.fine.json"),
             "--devices", "2"])
    out = json.loads(r.stdout.strip().splitlines()[-1])
    sim = out["simulation"]
    print("simulation: op-level %.1f us, module-level %.1f us, %d ops moved" % (
        sim["op_level"]["runtime_us"], sim["module_level"]["runtime_us"], sim["ops_moved"]))
    check(out["inexact_modules"] == 0, "by-module placement gives an exact map")
    dmap = json.load(open(w("map.json")))
    mods = dict(model.named_modules())
    check(all(m in mods for m in dmap["device_map"]), "every mapped module is a module")
    order = dmap["order"]
    check(sorted(order) == sorted(dmap["device_map"]) and all(
        order.index(m.rpartition(".")[0]) < order.index(m) for m in order
        if m and m.rpartition(".")[0] in dmap["device_map"]), "order: parents before children")
    owners = [n for n, m in model.named_modules() if list(m.parameters(recurse=False))]

    def mapped_owner(n):
        while n not in dmap["device_map"]:
            n = n.rpartition(".")[0]
        return n
    check(all(mapped_owner(n) != "" or n == "" for n in owners),
          "every parameter is in a mapped module below the root (%d modules own parameters)"
          % len(owners))
    # The export ran the model in training mode (BatchNorm statistics moved): compare two
    # fresh models built from the same seed.
    reference, _ = build(a.model)
    fresh, _ = build(a.model)
    reference.eval()
    fresh.eval()
    remap = {d: "cpu" for d in dmap["device_map"].values()}
    devices = placeto_device_map.apply_device_map(fresh, w("map.json"), remap=remap)
    with torch.no_grad():
        same = torch.equal(reference(x), fresh(x))
    check(same, "placed model (devices remapped to cpu) gives the unplaced model's outputs")
    check(len(devices) == len(mods), "apply_device_map places every module")
    if len(used) > 1:
        check(len(set(dmap["device_map"].values())) > 1, "the map uses both devices")

    # --format stages: the anneal placement is either a pipeline or refused as documented.
    r = subprocess.run([placeto, "export", "--placement", w("p.fine.json"), "--onnx", onnx_path,
                        "--format", "stages", "--out", w("stages.json")],
                       capture_output=True, text=True)
    if r.returncode == 0:
        check_stages(original, json.load(open(w("stages.json"))), "anneal placement")
    else:
        check(r.returncode == 2 and "not pipeline-contiguous" in r.stderr,
              "anneal placement: stages refused as not pipeline-contiguous")
    # Constructed placements (no onnx_nodes: ops matched by re-importing the model).
    fine = json.load(open(w("g.fine.json")))
    names = [n["name"] for n in fine["nodes"]]
    fwd = [i for i, node in enumerate(original.graph.node)
           if node.name in set(names)]
    half = {original.graph.node[i].name: (0 if k < len(fwd) // 2 else 1)
            for k, i in enumerate(fwd)}
    contiguous = {n: half.get(n, 0) for n in names}
    json.dump({"devices": 2, "placement": contiguous}, open(w("contig.json"), "w"))
    run([placeto, "export", "--placement", w("contig.json"), "--onnx", onnx_path,
         "--format", "stages", "--out", w("stages2.json")])
    stages = json.load(open(w("stages2.json")))
    check(len(stages["stages"]) == 2, "contiguous placement: two stages")
    check_stages(original, stages, "contiguous placement")
    # One op in the middle of a chain on device 1: 0 -> 1 -> 0.
    chain = [original.graph.node[i].name for i in fwd]
    middle = next(n for n in chain[len(chain) // 3:] if "Conv" in n or "MatMul" in n)
    broken = {n: 0 for n in names}
    broken[middle] = 1
    json.dump({"devices": 2, "placement": broken}, open(w("broken.json"), "w"))
    r = run([placeto, "export", "--placement", w("broken.json"), "--onnx", onnx_path,
             "--format", "stages", "--out", w("stages3.json")], expect=2)
    check("not pipeline-contiguous" in r.stderr and middle in r.stderr and
          not os.path.exists(w("stages3.json")),
          "non-contiguous placement refused, naming %s, no output" % middle)
    run([placeto, "export", "--placement", w("contig.json"), "--onnx", onnx_path,
         "--format", "onnx", "--out", w("placed2.onnx")])
    placed2 = onnx.load(w("placed2.onnx"))
    check(all(node_metadata(n).get("device") == "cuda:%d" % half[n.name]
              for n in placed2.graph.node if n.name in half),
          "placement without onnx_nodes: devices mapped through the re-import")

    # Bad input: exit 2, the file named, no output left.
    bad_out = w("bad.out")
    other = dict(contiguous)
    other["no/such/op"] = 0
    json.dump({"devices": 2, "placement": other}, open(w("other.json"), "w"))
    far = dict(contiguous)
    far[names[-1]] = 3
    json.dump({"devices": 4, "placement": far}, open(w("far.json"), "w"))
    cases = [
        (["--placement", w("other.json"), "--format", "onnx"], "no/such/op"),
        (["--placement", w("far.json"), "--format", "onnx", "--devices", "2"], "outside"),
        (["--placement", w("contig.json"), "--format", "tensorflow"], "unknown format"),
        (["--placement", w("missing.json"), "--format", "onnx"], "missing.json"),
        (["--placement", w("contig.json"), "--format", "torch-device-map", "--graph",
          w("g.json"), "--devices", "2"], "g.json"),
    ]
    for extra, needle in cases:
        r = run([placeto, "export", "--onnx", onnx_path, "--out", bad_out] + extra, expect=2)
        check(needle in r.stderr and not os.path.exists(bad_out),
              "bad input refused: %s (stderr: %s)" % (needle, r.stderr.strip()[:160]))
    # An exporter that writes no module scopes (names like tf2onnx's "Conv__12"): the device map
    # is refused naming the file, and --groups by-module likewise.
    plain = onnx.load(onnx_path)
    for i, n in enumerate(plain.graph.node):
        n.name = "%s__%d" % (n.op_type, i)
    plain_path = w("unscoped.onnx")
    onnx.save(plain, plain_path)
    run([placeto, "import", plain_path, "--training", "--out", w("unscoped.json")])
    run([placeto, "place", "--graph", w("unscoped.json"), "--devices", "2", "--method",
         "round-robin", "--out", w("unscoped_p.json")])
    r = run([placeto, "export", "--placement", w("unscoped_p.json"), "--onnx", plain_path,
             "--format", "torch-device-map", "--out", bad_out], expect=2)
    check("unscoped.onnx" in r.stderr and "module" in r.stderr and not os.path.exists(bad_out),
          "torch-device-map of a model without module scopes refused (stderr: %s)"
          % r.stderr.strip()[:200])
    r = run([placeto, "import", plain_path, "--groups", "by-module", "--out", w("unscoped_g.json")],
            expect=2)
    check("unscoped.onnx" in r.stderr and not os.path.exists(w("unscoped_g.json")),
          "import --groups by-module of a model without module scopes refused")
    print("%d failures" % len(FAILURES))
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
