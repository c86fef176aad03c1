#!/usr/bin/env python3
"""Sequences of length 0 and batches of 0 run, dynamic or static, and give
what the semantics say: no output rows, the initial states as final states.

  check_zero_extents.py --lstm-run PATH --examples DIR --out DIR [--cells a,b]
                        [--pre-passes 'P1;P2']

For every example (reference.py) and pre-pass pipeline: T = 0 and B = 0 on
the example as it is (dynamic extents); and on copies where the extent is
static (x: tensor<0x?x64xf32>, or a batch of 0 in every type of a one-layer
example), each through lstm-run. Checked: exit 0, every result of the
right shape with no elements where the batch or the length is 0, and with
T = 0 the final states equal to the initial ones (h0 -> result 1, c0 ->
result 2).
"""
import argparse
import os
import re
import subprocess
import sys

import numpy as np

sys.dont_write_bytecode = True
here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, '..', 'Integration'))
import reference  # noqa: E402


def static_variant(text, what):
    """The example with T (or B) static 0 in its types, or None when the
    example's IR cannot say it (a stack sizes its per-layer slices by a
    dynamic batch)."""
    if what == 'T':
        return text.replace('tensor<?x?x', 'tensor<0x?x')
    if re.search(r'tensor<\d+x\?x', text):  # per-layer states [L, B, H]
        return None
    text = text.replace('tensor<?x?x', 'tensor<?x0x')
    # [B, H] states: a 2-D type whose second extent is followed by the
    # element type; and the lengths [B].
    text = re.sub(r'tensor<\?x(\d+)x([fib])', r'tensor<0x\1x\2', text)
    return text.replace('tensor<?xi32>', 'tensor<0xi32>')


def run(args, example, cell, T, B, pre, tag):
    rng = np.random.default_rng(0)
    # Drawn with extents of at least 1, then cut to 0 along T and B.
    inputs = reference.make_inputs(cell, max(T, 1), max(B, 1), rng)
    spec = reference.EXAMPLES[cell][0]
    for k, (_, shape, _) in enumerate(spec):
        for axis, sym in enumerate(shape):
            if (sym == 'T' and T == 0) or (sym == 'B' and B == 0):
                inputs[k] = np.take(inputs[k], [], axis=axis)
    d = os.path.join(args.out, f'{cell}-{tag}-{T}-{B}-{pre or "none"}')
    os.makedirs(d, exist_ok=True)
    paths = []
    for k, a in enumerate(inputs):
        paths.append(os.path.join(d, f'in{k}.npy'))
        np.save(paths[-1], a)
    out = os.path.join(d, 'out')
    # -O0 (lstm-run --opt-level): the check is what the code computes; it compiles
    # in half the time of -O3 (test/Integration runs the examples at -O3).
    cmd = [args.lstm_run, example, '--opt-level=0', '--inputs=' + ','.join(paths),
           '--outputs=' + out]
    if pre:
        cmd.append('--pre-passes=' + pre)
    proc = subprocess.run(cmd, capture_output=True, text=True)
    what = f'{cell} ({tag}) T={T} B={B} pre-passes "{pre}"'
    if proc.returncode != 0:
        return [f'{what}: exit {proc.returncode}\n{proc.stdout}{proc.stderr}']
    names = [s[0] for s in spec]
    fails = []
    results = []
    k = 0
    while os.path.exists(os.path.join(out, f'{k}.npy')):
        results.append(np.load(os.path.join(out, f'{k}.npy')))
        k += 1
    if not results:
        return [f'{what}: no results']
    y = results[0]
    if y.ndim != 3 or y.shape[0] != T or y.shape[1] != B:
        fails.append(f'{what}: result 0 has shape {y.shape}, expected ({T}, {B}, N)')
    for r, name in zip(results[1:], ['h0', 'c0']):
        if name not in names:
            continue
        init = inputs[names.index(name)]
        if r.shape != init.shape:
            fails.append(f'{what}: final {name} has shape {r.shape}, expected {init.shape}')
        elif T == 0 and not np.array_equal(r, init):
            fails.append(f'{what}: with T = 0 the final {name} is not the initial one')
    return fails


def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--lstm-run', required=True)
    p.add_argument('--examples', required=True)
    p.add_argument('--out', required=True)
    p.add_argument('--cells', default=None)
    p.add_argument('--pre-passes', default=';lstm-optimize')
    args = p.parse_args()
    os.makedirs(args.out, exist_ok=True)
    cells = args.cells.split(',') if args.cells else sorted(reference.EXAMPLES)
    fails, runs = [], 0
    for cell in cells:
        example = os.path.join(args.examples, cell + '.mlir')
        text = open(example).read()
        for pre in args.pre_passes.split(';'):
            for T, B in ((0, 3), (4, 0)):
                fails += run(args, example, cell, T, B, pre, 'dynamic')
                runs += 1
                variant = static_variant(text, 'T' if T == 0 else 'B')
                if variant is None:
                    continue
                static = os.path.join(args.out, f'{cell}-static-{"T" if T == 0 else "B"}.mlir')
                with open(static, 'w') as f:
                    f.write(variant)
                fails += run(args, static, cell, T, B, pre, 'static')
                runs += 1
    for f in fails:
        print('FAIL: ' + f)
    print(f'{runs - len(fails)} of {runs} runs with a zero extent correct')
    print('PASSED' if not fails else 'FAILED')
    return 1 if fails else 0


if __name__ == '__main__':
    sys.exit(main())
