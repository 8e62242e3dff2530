#!/usr/bin/python3
"""End-to-end test of `placeto profile` on real exported models (run by CTest, label
integration, fixture onnx_models).

    /usr/bin/python3 tests/onnx/profile_test.py --bin BUILD/bin --models BUILD/onnx_models --work DIR

Profiles the seq2seq and Transformer exports as a training step (few repeats: this checks the
plumbing, not the numbers), then checks: the measured graph reads back and simulates to the
printed single-device step; the report has one row per op and agrees with the graph; the fitted
profile loads in `placeto import --profile F.yaml` and reproduces the report's fitted column;
`--fit-with` pools another model's report into the fit; the held-out error of a profile fitted
on one model is reported on the other.  Bad inputs exit 2, name what is wrong, and write nothing.
"""
import argparse
import csv
import json
import os
import subprocess
import sys

FAILURES = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        FAILURES.append(what)


def run(args, expect=0):
    p = subprocess.run(args, capture_output=True, text=True)
    if p.returncode != expect:
        print("command:", " ".join(args))
        print(p.stdout[-2000:], p.stderr[-2000:])
    return p


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--models", required=True)
    ap.add_argument("--work", required=True)
    a = ap.parse_args()
    placeto = os.path.join(a.bin, "placeto")
    os.makedirs(a.work, exist_ok=True)
    quick = ["--training", "--repeats", "2", "--warmup", "1"]
    w = lambda name: os.path.join(a.work, name)  # noqa: E731
    for f in os.listdir(a.work):
        os.remove(w(f))

    # 1. seq2seq: measured graph, report, fitted profile.
    p = run([placeto, "profile", os.path.join(a.models, "seq2seq.onnx"), "--out", w("s.json"),
             "--report", w("s.csv")] + quick)
    check(p.returncode == 0, "profile seq2seq exits 0")
    s = json.loads(p.stdout)
    check(s["measured_ops"] > 20 and s["ops"] == 46, "seq2seq: 46 ops, %d measured" % s["measured_ops"])
    check(os.path.exists(w("s.profile.yaml")), "fitted profile written beside --out")
    check("progress" not in p.stdout and "profile seq2seq" in p.stderr and "ETA" in p.stderr,
          "a progress line with ETA on stderr")
    rows = list(csv.DictReader(open(w("s.csv"))))
    check(len(rows) == s["ops"], "report: one row per op")
    graph = json.load(open(w("s.json")))
    costs = {n["name"]: n["cost_us"] for n in graph["nodes"]}
    check(all(abs(costs[r["op"]] - float(r["measured_us"])) <= 1e-3 * max(1.0, costs[r["op"]])
              for r in rows), "graph costs are the report's measured column")
    check(all(float(r["measured_us"]) > 0 for r in rows if r["measured"] == "1"),
          "measured ops have positive times")
    check({r["op_class"] for r in rows if r["role"] == "grad"} >= {"recurrent_grad"},
          "LSTM backward measured as recurrent_grad")
    check(any(r["op_class"] == "recurrent" and r["kernel"].startswith("recurrent") for r in rows),
          "LSTM timed with the recurrent kernel")
    # The measured graph simulates to the printed single-device step.
    q = run([placeto, "place", "--graph", w("s.json"), "--devices", "1", "--method", "single",
             "--out", w("s_single.json")])
    step = json.loads(q.stdout)["runtime_us"]
    check(abs(step - s["single_device_step_us"]["measured_ops"]) < 1e-6 * step + 1e-3,
          "placeto place on the measured graph: %.1f us = printed single-device step" % step)
    # The fitted profile, read by import, reproduces the report's fitted column.
    q = run([placeto, "import", os.path.join(a.models, "seq2seq.onnx"), "--out", w("s_fit.json"),
             "--training", "--profile", w("s.profile.yaml")])
    check(q.returncode == 0, "import --profile FITTED.yaml exits 0")
    fitted_total = sum(float(r["fitted_us"]) for r in rows)
    total = json.loads(q.stdout)["total_cost_us"]
    check(abs(total - fitted_total) <= 1e-3 * fitted_total,
          "import with the fitted profile: %.1f us = report's fitted sum %.1f" % (total, fitted_total))

    # 2. Transformer, its analytic costs from the seq2seq-fitted profile (held out), the fit
    # pooled with the seq2seq report.
    p = run([placeto, "profile", os.path.join(a.models, "transformer.onnx"), "--out", w("t.json"),
             "--profile", w("s.profile.yaml"), "--fit-with", w("s.csv"), "--fit-out", w("t.yaml")]
            + quick)
    check(p.returncode == 0, "profile transformer with --profile and --fit-with exits 0")
    t = json.loads(p.stdout)
    check(t["analytic_profile"] == "seq2seq-cpu-fitted", "held-out profile named in the output")
    check(t["fit_ops"] == t["measured_ops"] + s["measured_ops"], "--fit-with pools both models")
    for key in ("analytic", "analytic_scaled", "fitted"):
        e = t["error"][key]["all"]
        check(e["ops"] == t["measured_ops"] and e["median_abs_error"] >= 0,
              "error table '%s' over every measured op" % key)

    # 3. Bad input: exit 2, a message naming what is wrong, nothing written.
    model = os.path.join(a.models, "seq2seq.onnx")
    bad_yaml = w("bad.yaml")
    open(bad_yaml, "w").write("format: placeto-device-profile\nname: b\nbase: k80\npeak_flops: -1\n")
    not_report = w("not_report.csv")
    open(not_report, "w").write("a,b\n1,2\n")
    cases = [
        (["--device", "cuda:0"], "cuda:0"),
        (["--device", "tpu"], "tpu"),
        (["--batch", "4"], "no dynamic input dimension"),
        (["--profile", bad_yaml], "peak_flops"),
        (["--profile", "k90"], "k90"),
        (["--fit-with", not_report], "not_report.csv"),
    ]
    for extra, needle in cases:
        out = w("never.json")
        q = run([placeto, "profile", model, "--out", out] + extra, expect=2)
        check(q.returncode == 2 and needle in q.stderr and not os.path.exists(out)
              and not os.path.exists(w("never.profile.yaml")),
              "profile %s: exit 2 naming '%s', nothing written" % (" ".join(extra), needle))
    open(w("not_a_model.onnx"), "w").write("this is not a protobuf")
    q = run([placeto, "profile", w("not_a_model.onnx"), "--out", w("n.json")], expect=2)
    check(q.returncode == 2 and "not_a_model.onnx" in q.stderr, "not an ONNX file: exit 2 naming it")

    print("%d failures" % len(FAILURES))
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
