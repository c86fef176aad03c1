#!/usr/bin/env python3
"""Checks every network compiled into a directory, in one process.

  check_all_compiled.py DIR [--sizes T:B,...] [--seed N] [--tol 1e-5]

DIR/NAME.so is example NAME (scripts/gpu-compile.sh's layout); each is
checked as check_compiled.py does. One process for all of them, so that a
tool that wraps it (compute-sanitizer, scripts/gpu-sanitize.sh) starts
PyTorch and CUDA once. Prints "PASSED: NAME" or "FAILED: NAME" per library
and a last line "N of M libraries passed".
"""
import argparse
import glob
import os
import sys

import numpy as np
import torch

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_compiled import check  # noqa: E402


def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('directory')
    p.add_argument('--sizes', default='1:1,3:5,2:300')
    p.add_argument('--seed', type=int, default=None)
    p.add_argument('--tol', type=float, default=1e-5)
    args = p.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(4), 'little')
    rng = np.random.default_rng(seed)
    libraries = sorted(glob.glob(os.path.join(args.directory, '*.so')))
    passed = 0
    for lib in libraries:
        cell = os.path.basename(lib)[:-3]
        ok = check(lib, cell, args.sizes, rng, args.tol)
        print(('PASSED' if ok else 'FAILED') + f': {cell}')
        sys.stdout.flush()
        passed += ok
    print(f'{passed} of {len(libraries)} libraries passed (seed {seed})')
    return 0 if libraries and passed == len(libraries) else 1


if __name__ == '__main__':
    sys.exit(main())
