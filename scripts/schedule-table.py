#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Prints the schedule table of docs/passes.md: for every example, the
lstm-schedule-report of each optimisation level (GEMMs per step / pointwise
kernels per step / hoisted GEMMs, and the sequential steps).

  scripts/schedule-table.py [--lstm-opt build/bin/lstm-opt]
"""
import argparse
import glob
import os
import re
import subprocess

LEVELS = [
    ('none', []),
    ('combine', ['--lstm-combine-gate-gemms']),
    ('hoist', ['--lstm-hoist-input-projection']),
    ('fuse', ['--lstm-fuse-elementwise']),
    ('wavefront', ['--lstm-wavefront']),
    ('--lstm-optimize', ['--lstm-optimize']),
]
LINE = re.compile(r'@\w+ (layer \d+|wavefront of \d+ layers) \((\w+)\): gemms/step=(\d+) '
                  r'pointwise/step=(\d+) hoisted-gemms=(\d+) steps=(\S+)')


def report(lstm_opt, path, flags):
    out = subprocess.run([lstm_opt, path, *flags, '--lstm-schedule-report=output-file=-',
                          '-o', '/dev/null'], capture_output=True, text=True, check=True).stdout
    return [m.groups() for m in map(LINE.match, out.splitlines()) if m]


def cell(lines):
    return '<br>'.join(f'{g} / {p} / {h}, {s}' for _, _, g, p, h, s in lines)


def main():
    p = argparse.ArgumentParser()
    p.add_argument('--lstm-opt', default='build/bin/lstm-opt')
    a = p.parse_args()
    print('| example | ' + ' | '.join(name for name, _ in LEVELS) + ' |')
    print('| --- ' * (len(LEVELS) + 1) + '|')
    for path in sorted(glob.glob('examples/*.mlir')):
        cols = [cell(report(a.lstm_opt, path, flags)) for _, flags in LEVELS]
        print(f'| `{os.path.basename(path)[:-5]}` | ' + ' | '.join(cols) + ' |')


if __name__ == '__main__':
    main()
