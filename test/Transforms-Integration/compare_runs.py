#!/usr/bin/env python3
"""Runs two versions of a module on the same random inputs and compares them.

  compare_runs.py --lstm-run PATH ORIGINAL.mlir REWRITTEN.mlir
                  [--sizes 1,3,7] [--seed N] [--tol 1e-5]

For each size S, both files run through `lstm-run --entry=forward
--random-inputs --seed=N --dynamic-size=S` (every `?` extent, the sequence
length and the batch size, is S), and every result of the rewritten module
must be within relative error ||out - ref|| / ||ref|| <= tol of the original's,
with the same shape. Exits non-zero on any failure.
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np


def run(lstm_run, path, seed, size, outdir):
    # -O0 (lstm-run --opt-level): the check is what the code computes.
    cmd = [lstm_run, path, '--opt-level=0', '--entry=forward', '--random-inputs', f'--seed={seed}',
           f'--dynamic-size={size}', f'--outputs={outdir}']
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        print(f'error: {" ".join(cmd)} exited with {proc.returncode}\n{proc.stderr}')
        return None
    return [np.load(os.path.join(outdir, f)) for f in
            sorted(os.listdir(outdir), key=lambda n: int(n.split('.')[0]))]


def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('original')
    p.add_argument('rewritten')
    p.add_argument('--lstm-run', required=True)
    p.add_argument('--sizes', default='1,3,7')
    p.add_argument('--seed', type=int, default=None, help='default: a fresh random seed')
    p.add_argument('--tol', type=float, default=1e-5)
    args = p.parse_args()
    seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(4), 'little')
    failed = False
    for size in (int(s) for s in args.sizes.split(',')):
        with tempfile.TemporaryDirectory(prefix='compare_runs_') as tmp:
            dirs = [os.path.join(tmp, 'a'), os.path.join(tmp, 'b')]
            for d in dirs:
                os.mkdir(d)
            ref = run(args.lstm_run, args.original, seed, size, dirs[0])
            out = run(args.lstm_run, args.rewritten, seed, size, dirs[1])
        if ref is None or out is None:
            failed = True
            continue
        errors = []
        if len(ref) != len(out) or not ref:
            print(f'size {size}: {len(out)} results, expected {len(ref)}')
            failed = True
            continue
        for k, (r, o) in enumerate(zip(ref, out)):
            if r.shape != o.shape:
                print(f'size {size}: result {k} has shape {o.shape}, expected {r.shape}')
                failed = True
                continue
            n = np.linalg.norm(r.astype(np.float64))
            e = np.linalg.norm((o.astype(np.float64) - r)) / (n if n > 0 else 1.0)
            if not (np.isfinite(o).all() and e <= args.tol):
                print(f'size {size}: result {k}: relative error {e:.3e} > tol {args.tol:g}')
                failed = True
            errors.append(e)
        print(f'size {size}: {len(ref)} results, max rel err {max(errors):.2e}')
    print(('FAILED' if failed else 'PASSED') + f': {args.rewritten} (seed {seed})')
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
