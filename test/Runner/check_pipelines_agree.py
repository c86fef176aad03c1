# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Runs a network through lstm-run on the same random arguments without
pre-passes and with each given pipeline, and checks that every result agrees
with the unoptimised lowering's (relative Frobenius error at most --tol).

  check_pipelines_agree.py --lstm-run PATH NET.mlir --pipeline P [--pipeline Q ...]
      [--dynamic-sizes 1,5,9] [--seed S]
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np


def run(lstm_run, net, size, seed, out, pre_passes=None):
    # -O0 (lstm-run --opt-level): the check is what the code computes.
    cmd = [lstm_run, net, '--opt-level=0', '--random-inputs', f'--seed={seed}', f'--dynamic-size={size}',
           f'--outputs={out}']
    if pre_passes:
        cmd.append(f'--pre-passes={pre_passes}')
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return [np.load(os.path.join(out, f)) for f in sorted(os.listdir(out), key=lambda f: int(f.split('.')[0]))]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--lstm-run', required=True)
    ap.add_argument('net')
    ap.add_argument('--pipeline', action='append', required=True)
    ap.add_argument('--dynamic-sizes', default='1,5,9')
    ap.add_argument('--seed', type=int, default=int.from_bytes(os.urandom(4), 'little'))
    ap.add_argument('--tol', type=float, default=1e-5)
    a = ap.parse_args()
    failed = False
    with tempfile.TemporaryDirectory() as tmp:
        for size in [int(s) for s in a.dynamic_sizes.split(',')]:
            base = run(a.lstm_run, a.net, size, a.seed, os.path.join(tmp, f'base{size}'))
            for k, pipeline in enumerate(a.pipeline):
                outs = run(a.lstm_run, a.net, size, a.seed, os.path.join(tmp, f'p{k}_{size}'), pipeline)
                for i, (x, y) in enumerate(zip(base, outs)):
                    err = np.linalg.norm(x - y) / max(np.linalg.norm(x), 1e-30)
                    ok = x.shape == y.shape and np.isfinite(y).all() and err <= a.tol
                    print(f'{pipeline} size {size} result {i}: {"OK" if ok else "FAIL"} '
                          f'(relative error {err:.2e}, seed {a.seed})')
                    failed |= not ok
                if len(outs) != len(base):
                    print(f'{pipeline}: {len(outs)} results, expected {len(base)}')
                    failed = True
    sys.exit(1 if failed else 0)


if __name__ == '__main__':
    main()
