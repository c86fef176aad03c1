#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The random cells of test/Transforms-Integration/random_cells.py through the
persistent kernels on the GPU, in two halves for two machines:

  random_cells_persistent.py prepare --lstm-opt PATH --lstm-run PATH --dir DIR
                                     [--seeds 1,...] [--tries N]
  random_cells_persistent.py check --lstm-run PATH --dir DIR [--tol 1e-5]

prepare (where MLIR is): for each seed, builds the random cell and keeps it
if lstm-to-persistent runs at least one of its layers as a persistent kernel
after lstm-optimize{wavefront=false} (lstm-schedule-report's persistent
field says so), until --tries cells are kept or the seeds run out. For each
kept cell it writes DIR/SEED.mlir (the unoptimised cell), its shapes and
the reference: the cell unoptimised, run by lstm-run on the CPU with
--random-inputs --seed (DIR/SEED.ref/*.npy).

check (where the GPU is): runs each cell with lstm-run --device=cuda
--pre-passes=lstm-optimize{wavefront=false} --persistent on the same random
inputs and compares every result with the reference (relative error, no
NaN or Inf). Prints one line per cell, then "N of N persistent random cells
passed"; exits non-zero on any failure.
"""
import argparse
import json
import os
import re
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..',
                                'Transforms-Integration'))
import random_cells  # noqa: E402

PRE_PASSES = 'lstm-optimize{wavefront=false}'


def load_outputs(outdir):
    return [np.load(os.path.join(outdir, f))
            for f in sorted(os.listdir(outdir), key=lambda s: int(s[:-4]))]


def prepare(args):
    os.makedirs(args.dir, exist_ok=True)
    kept = []
    for seed in [int(s) for s in args.seeds.split(',')]:
        if len(kept) >= args.tries:
            break
        text, shapes, desc = random_cells.build(seed)
        src = os.path.join(args.dir, f'{seed}.mlir')
        with open(src, 'w') as f:
            f.write(text)
        report = subprocess.run(
            [args.lstm_opt, src, f'--lstm-optimize=wavefront=false',
             '--lstm-schedule-report=output-file=- persistent=true', '-o', os.devnull],
            capture_output=True, text=True, check=True).stdout
        layers = re.findall(r'persistent=(B<=\d+|no \(.*\))', report)
        if not any(l.startswith('B<=') for l in layers):
            os.remove(src)
            continue
        ref = os.path.join(args.dir, f'{seed}.ref')
        os.makedirs(ref, exist_ok=True)
        subprocess.run([args.lstm_run, src, '--entry=forward', '--random-inputs',
                        f'--seed={seed}', f'--shapes={shapes}', f'--outputs={ref}'],
                       capture_output=True, text=True, check=True)
        kept.append({'seed': seed, 'shapes': shapes, 'desc': desc, 'layers': layers})
        print(f'seed {seed}: {desc}: {", ".join(layers)}')
    with open(os.path.join(args.dir, 'cells.json'), 'w') as f:
        json.dump(kept, f, indent=1)
    print(f'{len(kept)} cells with persistent layers in {args.dir}')
    return 0 if kept else 1


def check(args):
    with open(os.path.join(args.dir, 'cells.json')) as f:
        cells = json.load(f)
    failed = 0
    for cell in cells:
        seed = cell['seed']
        src = os.path.join(args.dir, f'{seed}.mlir')
        outdir = os.path.join(args.dir, f'{seed}.cuda')
        os.makedirs(outdir, exist_ok=True)
        proc = subprocess.run(
            [args.lstm_run, src, '--entry=forward', '--device=cuda', f'--pre-passes={PRE_PASSES}',
             '--persistent', '--random-inputs', f'--seed={seed}', f'--shapes={cell["shapes"]}',
             f'--outputs={outdir}', *args.lstm_run_args.split()],
            capture_output=True, text=True)
        line = f'seed {seed} ({cell["desc"]}; {", ".join(cell["layers"])}):'
        if proc.returncode != 0:
            print(f'{line} lstm-run failed\n{proc.stderr}')
            failed += 1
            continue
        outs = load_outputs(outdir)
        refs = load_outputs(os.path.join(args.dir, f'{seed}.ref'))
        errs, ok = [], len(outs) == len(refs)
        for o, r in zip(outs, refs):
            if o.shape != r.shape or not np.isfinite(o).all():
                ok = False
                continue
            errs.append(random_cells.rel_err(o, r))
        ok = ok and all(e <= args.tol for e in errs)
        print(f'{line} max rel err {max(errs, default=float("nan")):.2e} '
              f'{"OK" if ok else "FAILED"}')
        failed += not ok
    print(f'{len(cells) - failed} of {len(cells)} persistent random cells passed')
    return 1 if failed or not cells else 0


def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    sub = p.add_subparsers(dest='mode', required=True)
    pp = sub.add_parser('prepare')
    pp.add_argument('--lstm-opt', required=True)
    pp.add_argument('--lstm-run', required=True)
    pp.add_argument('--dir', required=True)
    pp.add_argument('--seeds', default=','.join(str(s) for s in range(1, 201)))
    pp.add_argument('--tries', type=int, default=20)
    pc = sub.add_parser('check')
    pc.add_argument('--lstm-run', required=True)
    pc.add_argument('--dir', required=True)
    pc.add_argument('--tol', type=float, default=1e-5)
    pc.add_argument('--lstm-run-args', default='', help='more lstm-run options')
    args = p.parse_args()
    return prepare(args) if args.mode == 'prepare' else check(args)


if __name__ == '__main__':
    sys.exit(main())
