#!/usr/bin/env python3
"""Every run-time extent that must agree is checked by the generated code.

  check_mismatches.py --lstm-run PATH --examples DIR [--pre-passes P1;P2;...]
                      [--cells a,b,...] [--seed N] [--jobs N]

For every example of reference.py and every argument with a batch extent
(initial states, lengths), runs lstm-run on inputs where that one argument's
batch differs from the others' (one less, or one more for an argument that
the cell reads whole), after each --pre-passes pipeline (the empty pipeline
is the plain lowering). Each run must stop at a run-time check: exit 1, a
"run-time check failed" or "has a different ..." message on stderr (where
lstm-report-failed-checks writes it; stdout stays empty), and the runner's
report. A run that exits 0 is a silent wrong answer; anything else
(a crash) fails too.

Per-layer states [L, B, H] are made one row short only: the example slices
each layer's [B, H] out of them with the batch of h0, so a longer c0 is read
in bounds (its extra rows unused), which is what the IR says.
"""
import argparse
import concurrent.futures
import os
import subprocess
import sys
import tempfile

import numpy as np

sys.dont_write_bytecode = True
here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, '..', 'Integration'))
import reference  # noqa: E402

CHECK_SIGNS = ('run-time check failed', 'has a different batch size',
               'has a different size than the batch', 'has a different extent')


def cases(cells, rng):
    """(cell, argument index, new batch) for every argument with a B extent."""
    out = []
    for cell in cells:
        for k, (name, shape, _) in enumerate(reference.EXAMPLES[cell][0]):
            if 'B' not in shape or k == 0:
                continue  # x defines the batch
            stacked = shape[0] != 'B'
            delta = -1 if stacked else rng.choice([-1, 1])
            out.append((cell, k, name, delta))
    return out


def run_case(args, cell, k, name, delta, pre, seed):
    rng = np.random.default_rng(seed)
    T, B = 3, 3
    inputs = reference.make_inputs(cell, T, B, rng)
    spec = reference.EXAMPLES[cell][0][k][1]
    wrong = reference.make_inputs(cell, T, B + delta, rng)[k]
    assert wrong.shape != inputs[k].shape, (cell, name, spec)
    inputs[k] = wrong
    with tempfile.TemporaryDirectory(prefix=f'mismatch_{cell}_') as tmp:
        paths = []
        for j, a in enumerate(inputs):
            paths.append(os.path.join(tmp, f'{j}.npy'))
            np.save(paths[-1], a)
        # -O0 (lstm-run --opt-level): the check is the error, not the speed.
        cmd = [args.lstm_run, os.path.join(args.examples, cell + '.mlir'), '--opt-level=0',
               '--inputs=' + ','.join(paths)]
        if pre:
            cmd.append('--pre-passes=' + pre)
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    what = f'{cell} {name} batch {B + delta} (others {B}), pre-passes "{pre}"'
    checked = any(s in proc.stderr for s in CHECK_SIGNS) and not proc.stdout.strip()
    if proc.returncode == 1 and checked and 'failed run-time check' in proc.stderr:
        message = [line for line in proc.stderr.splitlines()
                   if any(s in line for s in CHECK_SIGNS)][-1]
        return True, f'{what}: stopped: {message.strip()[:150]}'
    return False, (f'{what}: NOT STOPPED BY A CHECK (exit {proc.returncode})\n'
                   f'  stdout: {proc.stdout.strip()[:300]}\n  stderr: {proc.stderr.strip()[:300]}')


def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--lstm-run', required=True)
    p.add_argument('--examples', required=True)
    p.add_argument('--pre-passes', default=';lstm-optimize',
                   help='pipelines separated by ";" (empty: none)')
    p.add_argument('--cells', default=None, help='default: every example')
    p.add_argument('--seed', type=int, default=0)
    p.add_argument('--jobs', type=int, default=2)
    args = p.parse_args()
    cells = args.cells.split(',') if args.cells else sorted(reference.EXAMPLES)
    rng = np.random.default_rng(args.seed)
    work = [(c, k, n, d, pre, int(rng.integers(1 << 31)))
            for (c, k, n, d) in cases(cells, rng) for pre in args.pre_passes.split(';')]
    failed = 0
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        for ok, line in pool.map(lambda w: run_case(args, *w), work):
            print(('ok: ' if ok else 'FAIL: ') + line)
            failed += not ok
    print(f'{len(work) - failed} of {len(work)} mismatches stopped by a run-time check')
    print('PASSED' if not failed else 'FAILED')
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
