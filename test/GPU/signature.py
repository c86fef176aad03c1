#!/usr/bin/env python3
"""Writes the signatures of the functions a compiled library exports (JSON).

  signature.py --tools DIR [--gradients] [--pre-passes P] NET.mlir -o NET.sig.json

A library compiled by `lstm-compile --gradients` exports @forward_train, whose
results are @forward's results followed by the saved activations; how many
there are depends on the cell, and the C interface does not say. This runs
the passes lstm-compile runs before lowering (lstm-combine-gate-gemms and
lstm-differentiate with --gradients, then the pre-passes) with lstm-opt and
records, for every public function, its arguments' and results' shapes
(null for a dynamic extent) and element types:

  {"forward_train": {"args": [{"shape": [null, null, 64], "dtype": "f32"}, ...],
                     "results": [...]}, ...}

test/GPU/grad_net.py reads it beside the library (NET.so -> NET.sig.json) on
the GPU machine, where there is no MLIR.
"""
import argparse
import json
import os
import re
import subprocess
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..',
                                'Differentiation'))
import gradcheck  # noqa: E402

_NAMES = {'float32': 'f32', 'float64': 'f64', 'int32': 'i32', 'int64': 'i64'}


def signatures(ir):
    """{name: {'args': [...], 'results': [...]}} of the public functions in `ir`."""
    out = {}
    for m in re.finditer(r'^\s*func\.func @([A-Za-z0-9_$.]+)\(', ir, re.M):
        args, results = gradcheck.signature(ir, m.group(1))
        out[m.group(1)] = {
            kind: [{'shape': shape, 'dtype': _NAMES[dtype.name]} for shape, dtype in values]
            for kind, values in (('args', args), ('results', results))}
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('input')
    p.add_argument('--tools', required=True, help='directory with lstm-opt')
    p.add_argument('--gradients', action='store_true',
                   help='as lstm-compile --gradients: lstm-combine-gate-gemms and '
                        'lstm-differentiate first')
    p.add_argument('--pre-passes', default='', help="as lstm-compile's --pre-passes")
    p.add_argument('-o', '--output', required=True)
    a = p.parse_args()
    passes = (['lstm-combine-gate-gemms', 'lstm-differentiate'] if a.gradients else [])
    passes += [a.pre_passes] if a.pre_passes.strip() else []
    cmd = [os.path.join(a.tools, 'lstm-opt'), a.input]
    if passes:
        cmd.append('--pass-pipeline=builtin.module(' + ','.join(passes) + ')')
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    except subprocess.TimeoutExpired:
        sys.exit(f'signature.py: {" ".join(cmd)} timed out')
    if r.returncode != 0:
        sys.exit(f'signature.py: {" ".join(cmd)} failed:\n{r.stderr}')
    sigs = signatures(r.stdout)
    if 'forward' not in sigs:
        sys.exit(f'signature.py: no public @forward in {a.input}')
    with open(a.output, 'w') as f:
        json.dump(sigs, f, indent=1)


if __name__ == '__main__':
    main()
