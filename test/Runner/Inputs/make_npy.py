"""Writes random .npy files for the runner's error tests.

usage: make_npy.py OUT.npy SHAPE DTYPE [OUT.npy SHAPE DTYPE ...]
SHAPE is like 5x2x4 (or 'scalar'); DTYPE a numpy dtype name.
"""
import sys

import numpy as np

rng = np.random.default_rng()
args = sys.argv[1:]
for path, shape, dtype in zip(args[0::3], args[1::3], args[2::3]):
    dims = () if shape == "scalar" else tuple(int(d) for d in shape.split("x"))
    if np.dtype(dtype).kind == "i":
        a = rng.integers(1, 3, dims).astype(dtype)
    else:
        a = rng.uniform(-1, 1, dims).astype(dtype)
    np.save(path, a)
