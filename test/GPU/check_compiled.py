#!/usr/bin/env python3
"""Checks a network compiled for CUDA against the float64 numpy reference.

  check_compiled.py LIBRARY.so --cell NAME [--sizes T:B,...] [--seed N] [--tol 1e-5]

Uses the inputs, argument layout and reference of test/Integration/reference.py;
runs the library on the GPU through compiled_net.py (PyTorch tensors, no
copies in) and checks every result's shape, finiteness and relative error.
"""
import argparse
import os
import sys

import numpy as np
import torch

sys.dont_write_bytecode = True
here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
sys.path.insert(0, os.path.join(here, '..', 'Integration'))
import reference  # noqa: E402
from compiled_net import CompiledNet  # noqa: E402


def check(library, cell, sizes, rng, tol):
    """Checks `library` (example `cell`) at each T:B of `sizes`; prints a line
    per size and returns whether all passed."""
    net = CompiledNet(library)
    failed = False
    for size in sizes.split(','):
        T, B = (int(v) for v in size.split(':'))
        inputs = reference.make_inputs(cell, T, B, rng)
        ref = reference.expected(cell, inputs)
        try:
            outs = net([torch.from_numpy(np.ascontiguousarray(a)).cuda() for a in inputs],
                       [r.ndim for r in ref])
        except RuntimeError as e:
            print(f'{cell} T={T} B={B}: FAIL {e}')
            failed = True
            continue
        errs, bad = [], []
        for k, (o, r) in enumerate(zip(outs, ref)):
            o = o.cpu().numpy().astype(np.float64)
            if o.shape != r.shape:
                bad.append(f'result {k}: shape {o.shape}, expected {r.shape}')
                continue
            if not np.isfinite(o).all():
                bad.append(f'result {k}: NaN/Inf')
                continue
            n = np.linalg.norm(r)
            e = np.linalg.norm(o - r) / (n if n > 0 else 1.0)
            errs.append(e)
            if not e <= tol:
                bad.append(f'result {k}: relative error {e:.3e} > {tol:g}')
        worst = max(errs, default=float('nan'))
        print(f'{cell} T={T} B={B}: max rel err {worst:.2e} {"FAIL" if bad else "OK"}')
        for b in bad:
            print('  error: ' + b)
        sys.stdout.flush()
        failed |= bool(bad)
    return not failed


def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('library')
    p.add_argument('--cell', required=True, choices=sorted(reference.EXAMPLES))
    p.add_argument('--sizes', default='1:1,1:4,5:1,7:3,12:5,9:300')
    p.add_argument('--seed', type=int, default=None)
    p.add_argument('--tol', type=float, default=1e-5)
    args = p.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False

    seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(4), 'little')
    rng = np.random.default_rng(seed)
    ok = check(args.library, args.cell, args.sizes, rng, args.tol)
    print(('PASSED' if ok else 'FAILED') + f': {args.cell} (seed {seed})')
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main())
