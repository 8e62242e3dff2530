#!/usr/bin/python3
"""Reads a checkpoint written by the C++ code with h5py (Debian python3-h5py) and checks the
layout of docs/CHECKPOINT.md, values, per-dataset checksums and the whole-file digest.

usage: /usr/bin/python3 read_with_h5py.py CKPT_TEST_WRITER SCRATCH_DIR [PLACETO]
With PLACETO, also checks `placeto ckpt-info` on the file and on a bit-flipped copy.
The values mirror tests/checkpoint/test_checkpoint_data.cc (make_test_checkpoint(7))."""
import hashlib
import json
import os
import shutil
import subprocess
import sys

import h5py
import numpy as np


def main():
    writer, scratch = sys.argv[1], sys.argv[2]
    os.makedirs(scratch, exist_ok=True)
    path = os.path.join(scratch, "ckpt_7.h5")
    subprocess.run([writer, "fixture", path], check=True)

    with open(path, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    with open(path + ".sha256") as f:
        assert f.read() == digest + "  ckpt_7.h5\n", "whole-file digest"

    with h5py.File(path, "r") as f:
        meta = f["meta"].attrs
        assert meta["format_version"] == 1
        assert meta["step"] == 7
        assert meta["episodes"] == 7017
        assert meta["world_size"] == 4
        assert meta["created_utc"] == "2026-12-02T09:00:00Z"
        assert meta["git_revision"] == "abc123def456"
        assert "placeto \u00e9t\u00e9" in meta["config_yaml"], meta["config_yaml"]

        w = f["model/encoder/layer.0/weight"]
        assert w.dtype == np.float32 and w.shape == (3, 4)
        np.testing.assert_array_equal(w[()], np.arange(12, dtype=np.float32).reshape(3, 4) * 0.5 - 1 + 7)
        bias = f["model/encoder/layer.0/bias"][()]
        assert bias.view(np.uint32)[0] == 0x7FC00123 and np.signbit(bias[1])
        assert f["model/head.scale"].shape == () and f["model/head.scale"][()] == 10.25
        assert f["model/empty"].shape == (0, 3)
        assert f["optim"].attrs["step"] == 21
        moment = f["optim/encoder/layer.0/weight/exp_avg"][()]
        assert (moment.view(np.uint8) == (w[()].view(np.uint8) ^ 0x5A)).all()
        assert "exp_avg_sq" in f["optim/encoder/layer.0/weight"]
        np.testing.assert_array_equal(f["schedules/entropy_coef"][()], [0.01, 1e-300])
        seen = f["baselines/seen"]
        assert seen.dtype == np.int64 and seen[0, 0] == np.iinfo(np.int64).min
        assert f["baselines/mask"].dtype == np.uint8
        assert bytes(f["rng/rank_0"][()]) == b"\x00\x01\xff mt19937 state"
        assert bytes(f["rng/rank_3"][()]) == b"rank three engine bytes 7"
        assert f["rng/rank_12"].shape == (0,)
        counters = dict(f["counters"].attrs)
        assert counters == {"episodes_since_eval": 14, "negative": -42, "max": 2**63 - 1}, counters

        checked = []

        def verify(name, obj):
            if isinstance(obj, h5py.Dataset):
                data = obj[()]
                raw = data.tobytes() if isinstance(data, np.ndarray) else np.asarray(data).tobytes()
                assert hashlib.sha256(raw).hexdigest() == obj.attrs["sha256"], name
                checked.append(name)

        f.visititems(verify)
        assert len(checked) == 4 + 8 + 1 + 3 + 3, checked
    print("h5py read %s: %d datasets verified" % (path, len(checked)))
    if len(sys.argv) > 3:
        check_ckpt_info(sys.argv[3], path, digest, len(checked))


def check_ckpt_info(placeto, path, digest, num_datasets):
    out = subprocess.run([placeto, "ckpt-info", path], check=True, capture_output=True, text=True)
    info = json.loads(out.stdout)
    assert info["sha256"] == digest and info["meta"]["step"] == 7, info
    assert len(info["datasets"]) == num_datasets, info["datasets"]
    damaged = path.replace("ckpt_7", "damaged")
    shutil.copy(path, damaged)
    shutil.copy(path + ".sha256", damaged + ".sha256")
    with open(damaged, "r+b") as f:
        f.seek(os.path.getsize(damaged) // 2)
        byte = f.read(1)
        f.seek(-1, os.SEEK_CUR)
        f.write(bytes([byte[0] ^ 0x10]))
    bad = subprocess.run([placeto, "ckpt-info", damaged], capture_output=True, text=True)
    assert bad.returncode == 2 and "SHA-256 mismatch" in bad.stderr, (bad.returncode, bad.stderr)
    print("placeto ckpt-info: verified file described, damaged copy refused")


if __name__ == "__main__":
    main()
