#!/usr/bin/python3
"""The zoo's export on a tiny config (run by CTest, label integration; about 5 s on 2 cores).

    /usr/bin/python3 tests/onnx/zoo_test.py --bin BUILD/bin --work DIR

Exports the 2-layer GPT-style decoder of experiments/zoo/export_zoo.py (`gpt2`: d = 768, 12
heads, sequence 128, batch 8, structure only) and imports it as `import_zoo.sh` imports the
decoders (`placeto import --training`), then checks the structure: the parameters are those
of the PyTorch model (within 1%), no op type falls back and no shape stays unknown, the
causal mask is folded away (no Trilu, no data-dependent mask op), every forward op that
holds parameters has a `/grad` and an `/update` that holds them, and the graph has the
decoder's matrix products: per layer the fused q/k/v projection, q k^T, the attention-
weighted values, the output projection and two feed-forward layers, plus the language-model
head. The single-device placement simulates, and its memory (peak activations plus
parameters) is positive and holds the parameters.

Then the piecewise export that the deep decoders use (`--blockwise`, export_zoo.py's
export_blockwise) of a 3-layer decoder of width 128 imports to the same ops (type, cost,
output and parameter bytes), the same edge count and the same single-device step as the
whole-model export of the same decoder.
"""
import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
EXPORT = os.path.join(HERE, "..", "..", "experiments", "zoo", "export_zoo.py")
FAILURES = []

LAYERS, D, FF, SEQ, VOCAB = 2, 768, 3072, 128, 50257


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        FAILURES.append(what)


def run(args):
    r = subprocess.run(args, capture_output=True, text=True)
    if r.returncode != 0:
        print(" ".join(args), "\n", r.stdout, r.stderr)
    check(r.returncode == 0, "%s exits 0 (got %d)" % (os.path.basename(args[1]), r.returncode))
    return r


def decoder_params():
    """The PyTorch decoder's parameter count, from its definition in export_zoo.py."""
    layer = (3 * D * D + 3 * D) + (D * D + D) + (D * FF + FF) + (FF * D + D) + 2 * 2 * D
    return VOCAB * D + SEQ * D + LAYERS * layer + 2 * D + D * VOCAB


def imported(placeto, work, blockwise):
    """Exports gpt3w128 (piecewise or whole) and imports it --training; returns the summary,
    the graph's ops as sorted (type, cost, output bytes, parameter bytes) and its
    single-device step."""
    out = os.path.join(work, "blockwise" if blockwise else "whole")
    os.makedirs(out, exist_ok=True)
    run([sys.executable, EXPORT, out, "--models", "gpt3w128"] + (["--blockwise"] if blockwise
                                                                 else []))
    graph_path = os.path.join(out, "gpt3w128.json")
    r = run([placeto, "import", os.path.join(out, "gpt3w128.onnx"), "--training", "--out",
             graph_path])
    if r.returncode:
        return None
    with open(graph_path) as fh:
        g = json.load(fh)
    ops = sorted((n["op"], n["cost_us"], n.get("out_bytes"), n.get("param_bytes", 0))
                 for n in g["nodes"])
    place_path = os.path.join(out, "single.json")
    run([placeto, "place", "--graph", graph_path, "--devices", "1", "--method", "single",
         "--out", place_path])
    sim = run([placeto, "sim", "--graph", graph_path, "--placement", place_path])
    step = json.loads(sim.stdout)["runtime_us"] if sim.returncode == 0 else None
    return json.loads(r.stdout), ops, step


def check_blockwise(placeto, work):
    whole = imported(placeto, work, False)
    pieces = imported(placeto, work, True)
    if whole is None or pieces is None:
        check(False, "both exports of gpt3w128 import")
        return
    check(whole[0]["ops"] == pieces[0]["ops"] and whole[0]["edges"] == pieces[0]["edges"],
          "piecewise export: %d ops, %d edges; whole export: %d ops, %d edges" %
          (pieces[0]["ops"], pieces[0]["edges"], whole[0]["ops"], whole[0]["edges"]))
    check(whole[1] == pieces[1], "piecewise and whole exports give the same ops")
    check(whole[2] is not None and whole[2] == pieces[2],
          "the same single-device step (%s and %s us)" % (pieces[2], whole[2]))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bin", required=True)
    p.add_argument("--work", required=True)
    a = p.parse_args()
    os.makedirs(a.work, exist_ok=True)
    placeto = os.path.join(a.bin, "placeto")
    run([sys.executable, EXPORT, a.work, "--models", "gpt%d" % LAYERS])
    model = os.path.join(a.work, "gpt%d.onnx" % LAYERS)
    graph_path = os.path.join(a.work, "gpt%d.json" % LAYERS)
    r = run([placeto, "import", model, "--training", "--out", graph_path])
    if FAILURES:
        return 1
    s = json.loads(r.stdout)
    params = decoder_params()
    check(abs(s["param_bytes"] / (4 * params) - 1) < 0.01,
          "parameters: %d bytes, PyTorch's %d x 4" % (s["param_bytes"], params))
    check(s["fallback_share"] == 0, "no fallback cost (%s)" % s["fallback_op_types"])
    check(s["unknown_shape_ops"] == 0, "no unknown shapes")

    with open(graph_path) as fh:
        g = json.load(fh)
    nodes = {n["name"]: n for n in g["nodes"]}
    # PyTorch names nodes by module scope (/blocks/layers.0/...), so a forward op is one
    # that is not synthesised by --training.
    forward = [n for n in g["nodes"]
               if not n["name"].endswith(("/grad", "/update", "/grad_sum"))]
    check(s["ops"] == len(g["nodes"]), "the summary counts the graph's %d ops" % len(g["nodes"]))
    check(not any(n["op"] in ("Trilu", "Where", "Less", "Greater", "Range") for n in forward),
          "the causal mask is a constant (no mask op reads data)")
    matmuls = [n for n in forward if n["op"] in ("MatMul", "Gemm")]
    check(len(matmuls) == 6 * LAYERS + 1,
          "%d matrix products (6 per layer + the head), want %d" % (len(matmuls), 6 * LAYERS + 1))
    held = [n for n in g["nodes"] if n.get("param_bytes", 0) > 0]
    check(held and all(n["name"].endswith("/update") for n in held),
          "parameters are held by /update ops only (%d)" % len(held))
    missing = [n["name"] for n in held
               if n["name"][:-len("/update")] + "/grad" not in nodes]
    check(not missing, "every /update's forward op has a /grad (missing: %s)" % missing[:3])
    grads = [n for n in g["nodes"] if n["name"].endswith("/grad")]
    check(len(grads) >= len(matmuls), "%d /grad ops" % len(grads))

    place_path = os.path.join(a.work, "gpt%d.single.json" % LAYERS)
    run([placeto, "place", "--graph", graph_path, "--devices", "1", "--method", "single",
         "--out", place_path])
    r = run([placeto, "sim", "--graph", graph_path, "--placement", place_path])
    if r.returncode == 0:
        sim = json.loads(r.stdout)
        total = sim["peak_mem_bytes"][0] + sim["param_bytes"][0]
        check(sim["param_bytes"][0] == s["param_bytes"] and total > s["param_bytes"],
              "one device holds the parameters and the activations (%d bytes)" % total)
    check_blockwise(placeto, a.work)
    print("%d failure(s)" % len(FAILURES))
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
