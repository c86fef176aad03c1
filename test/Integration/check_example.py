#!/usr/bin/env python3
"""Runs an example through lstm-run and compares it with the float64 reference.

  check_example.py --lstm-run PATH EXAMPLE.mlir --cell NAME
                   [--sizes T:B,...] [--seed N] [--tol 1e-5] [--device cpu]
                   [--lstm-run-args='--pre-passes=lstm-optimize ...']

For each (T, B): draws fresh random inputs (reference.make_inputs), writes them as
.npy files, runs `lstm-run EXAMPLE.mlir --entry=forward --device=DEV ARGS --inputs=...
--outputs=DIR`, and checks every result DIR/<k>.npy for shape, finiteness and
relative error ||out - ref|| / ||ref|| <= tol. Exits non-zero on any failure.
"""
import argparse
import os
import shlex
import subprocess
import sys
import tempfile

import numpy as np

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import reference  # noqa: E402


def rel_err(out, ref):
    out, ref = out.astype(np.float64), ref.astype(np.float64)
    n = np.linalg.norm(ref)
    return np.linalg.norm(out - ref) / (n if n > 0 else 1.0)


def check_size(args, T, B, rng):
    """Runs one (T, B) case; returns (summary, list of failure messages)."""
    spec = reference.EXAMPLES[args.cell][0]
    inputs = reference.make_inputs(args.cell, T, B, rng)
    ref = reference.expected(args.cell, inputs)
    with tempfile.TemporaryDirectory(prefix=f'check_{args.cell}_') as tmp:
        paths = []
        for k, ((name, _, _), a) in enumerate(zip(spec, inputs)):
            paths.append(os.path.join(tmp, f'in{k}_{name}.npy'))
            np.save(paths[-1], a)
        outdir = os.path.join(tmp, 'out')
        os.mkdir(outdir)
        cmd = [args.lstm_run, args.example, '--entry=forward', f'--device={args.device}',
               *shlex.split(args.lstm_run_args),
               '--inputs=' + ','.join(paths), f'--outputs={outdir}']
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            return 'lstm-run FAILED', [f'lstm-run exited with {proc.returncode}\n'
                                       f'  command: {" ".join(cmd)}\n  stderr:\n{proc.stderr}']
        files = sorted(os.listdir(outdir))
        if len(files) != len(ref):
            return 'FAIL', [f'expected {len(ref)} results (0.npy ...), lstm-run wrote {files}']
        errors, fails = [], []
        for k, r in enumerate(ref):
            path = os.path.join(outdir, f'{k}.npy')
            if not os.path.exists(path):
                fails.append(f'result {k}: missing {k}.npy')
                continue
            out = np.load(path)
            errors.append('-')  # replaced by the error once the result is comparable
            if out.shape != r.shape:
                fails.append(f'result {k}: shape {out.shape}, expected {r.shape}')
            elif out.dtype.kind != 'f':
                fails.append(f'result {k}: dtype {out.dtype}, expected a float type')
            elif not np.isfinite(out).all():
                fails.append(f'result {k}: {np.size(out) - np.isfinite(out).sum()} NaN/Inf values')
            else:
                e = rel_err(out, r)
                errors[-1] = f'{e:.2e}'
                if not e <= args.tol:
                    fails.append(f'result {k}: relative error {e:.3e} > tol {args.tol:g}')
        worst = max((float(e) for e in errors if e != '-'), default=float('nan'))
        return (f'max rel err {worst:.2e} (per result: {", ".join(errors)}) '
                f'{"FAIL" if fails else "OK"}'), fails


def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('example', help='the .mlir file')
    p.add_argument('--lstm-run', required=True, help='path of the lstm-run binary')
    p.add_argument('--cell', required=True, choices=sorted(reference.EXAMPLES))
    p.add_argument('--sizes', default='1:1,1:4,5:1,7:3,12:5', help='T:B,T:B,...')
    p.add_argument('--seed', type=int, default=None, help='default: a fresh random seed')
    p.add_argument('--tol', type=float, default=1e-5)
    p.add_argument('--device', default='cpu')
    # One string (shlex-split), given as --lstm-run-args='...': argparse takes a
    # separate value that starts with '-' for an option.
    p.add_argument('--lstm-run-args', default='',
                   help="more lstm-run options, e.g. '--pre-passes=lstm-optimize --compute-type=tf32'")
    args = p.parse_args()

    if not os.access(args.lstm_run, os.X_OK):
        print(f'error: lstm-run not found or not executable: {args.lstm_run}')
        return 1
    seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(4), 'little')
    extra = f' {args.lstm_run_args}' if args.lstm_run_args else ''
    print(f'{args.cell}: {args.example} (seed {seed}, tol {args.tol:g}, device {args.device}{extra})')
    rng = np.random.default_rng(seed)
    failed = False
    for size in args.sizes.split(','):
        T, B = (int(v) for v in size.split(':'))
        summary, fails = check_size(args, T, B, rng)
        print(f'{args.cell} T={T} B={B}: {summary}')
        for f in fails:
            print(f'  error: {f}')
        sys.stdout.flush()
        failed |= bool(fails)
    if failed:
        print(f'FAILED: {args.cell} (rerun with --seed {seed})')
        return 1
    print(f'PASSED: {args.cell}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
