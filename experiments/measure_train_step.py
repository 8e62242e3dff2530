#!/usr/bin/python3
"""Times one training step of each model end to end in PyTorch (Debian's torch 1.13, the same
LibTorch build `placeto profile` times ops with): forward, backward of the output's sum, and
an SGD-with-momentum step, on one CPU thread, at the exported shapes (batch 1), with denormal
floats flushed to zero and glibc's allocator told to keep freed tensors, as in `placeto
profile`.  The models are
built by tests/onnx/export_models.py's build() (same definitions and seed as the exported
ONNX files); eval mode, as exported (BatchNorm uses running statistics, dropout is off).

    /usr/bin/python3 experiments/measure_train_step.py OUT.json [--models a,b] [--steps 7]

Writes {model: {"step_us": median, "steps_us": [...], "threads": 1}}.
"""
import argparse
import json
import os
import statistics
import sys
import time

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "onnx"))
import export_models  # noqa: E402


def step_times(name, steps, warmup):
    model, args = export_models.build(name)
    model.eval()
    opt = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
    times = []
    for i in range(warmup + steps):
        t0 = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        out = model(*args)
        out = out[0] if isinstance(out, tuple) else out
        out.float().sum().backward()
        opt.step()
        if i >= warmup:
            times.append((time.perf_counter() - t0) * 1e6)
    return times


def main():
    # The allocator settings of `placeto profile` (common/malloc_tuning.h): glibc reads them
    # at start-up, so the script re-executes itself once with them set.
    if os.environ.get("MALLOC_MMAP_THRESHOLD_") is None:
        env = dict(os.environ, MALLOC_MMAP_THRESHOLD_=str(1 << 30),
                   MALLOC_TRIM_THRESHOLD_=str(2047 << 20))
        os.execve(sys.executable, [sys.executable] + sys.argv, env)
    p = argparse.ArgumentParser()
    p.add_argument("out")
    p.add_argument("--models", default="resnet50,inception_v3,transformer,seq2seq,mobilenet_v2")
    p.add_argument("--steps", type=int, default=7)
    p.add_argument("--warmup", type=int, default=2)
    a = p.parse_args()
    torch.set_num_threads(1)
    # As `placeto profile` does: denormal floats (which recurrent gradients reach) are flushed
    # to zero, so that times depend on the ops, not on how small the random data's values get.
    torch.set_flush_denormal(True)
    result = {}
    for name in a.models.split(","):
        t = step_times(name, a.steps, a.warmup)
        result[name] = {"step_us": statistics.median(t), "min_step_us": min(t), "steps_us": t,
                        "threads": 1}
        print("%s: %.1f ms per training step (median of %d)" % (name, result[name]["step_us"] / 1e3,
                                                                 len(t)), flush=True)
    with open(a.out + ".tmp", "w") as f:
        json.dump(result, f, indent=1)
    os.replace(a.out + ".tmp", a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
