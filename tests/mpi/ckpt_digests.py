#!/usr/bin/env python3
"""Prints one line per dataset of a checkpoint: '<path> <sha256 of its raw bytes>'."""
import hashlib, sys
import h5py

def visit(f):
    rows = []
    def cb(name, obj):
        if isinstance(obj, h5py.Dataset):
            rows.append((name, hashlib.sha256(obj[()].tobytes()).hexdigest()))
    f.visititems(cb)
    return sorted(rows)

with h5py.File(sys.argv[1], "r") as f:
    for name, digest in visit(f):
        print(name, digest)
