#!/usr/bin/env python3
"""Random well-formed cells, run unoptimised and through each pass pipeline.

  random_cells.py --lstm-opt PATH --lstm-run PATH [--seeds 1,2,...] [--jobs N]
                  [--keep DIR] [--tol 1e-5]

For each seed, builds a random `lstm.layer` cell from the dialect's
primitives (gates with random activations; products on x_t, on h, on other
state, on values computed in the cell, with weights from the arguments or
computed in the cell; addends, biases, peepholes; lstm.one_minus;
arith.addf/mulf/subf and math.tanh on tensors; several state variables; one
or two input sequences; random H and I; forward or reverse; optional
lengths). Every pipeline of PIPELINES runs on it through `lstm-opt
-verify-each`, every result through `lstm-run --random-inputs --seed` (the
same inputs for all), and each pipeline's outputs must equal the
unoptimised outputs within --tol relative (||out - ref|| / ||ref||), with no
NaN or Inf. Odd seeds run hoisted input projections as they are, even seeds
in their steps (lstm-hoist-by-threads' two forms). Exits non-zero on any failure and prints the cell's file.

A new pass is one more line in PIPELINES.
"""
import argparse
import concurrent.futures
import os
import random
import re
import subprocess
import sys
import tempfile

import numpy as np

# name -> lstm-opt flags. The first entry is the reference.
PIPELINES = [
    ('none', []),
    ('combine', ['--lstm-combine-gate-gemms']),
    ('hoist', ['--lstm-hoist-input-projection']),
    ('combine+hoist', ['--lstm-combine-gate-gemms', '--lstm-hoist-input-projection']),
    ('hoist+combine', ['--lstm-hoist-input-projection', '--lstm-combine-gate-gemms']),
    ('fuse', ['--lstm-fuse-elementwise']),
    ('optimize', ['--lstm-optimize']),
]
# Stacks (--layers) also as a wavefront, every chain rewritten.
STACK_PIPELINES = [('wavefront', ['--lstm-wavefront'])]

DEFAULT_SEEDS = ','.join(str(s) for s in range(1, 21))


class Cell:
    """Builds the text of one random module."""

    def __init__(self, rng):
        self.rng = rng
        self.args = []       # (name, type) of the function, in order
        self.shapes = []     # --shapes entries of the leading (dynamic) args
        self.body = []       # lines of the cell
        self.counter = 0

    def fresh(self, prefix):
        self.counter += 1
        return f'%{prefix}{self.counter}'

    def arg(self, prefix, type_):
        name = self.fresh(prefix)
        self.args.append((name, type_))
        return name

    def emit(self, line):
        self.body.append('    ' + line)


def tensor(*dims):
    return 'tensor<' + 'x'.join('?' if d is None else str(d) for d in dims) + 'xf32>'


def build(seed, layers=1):
    """Returns (module text, --shapes value, description). With `layers` > 1,
    that many copies of the cell stacked, each with weights and initial
    states of its own: layer k reads layer k-1's first output as its first
    input (of H features) and the same other inputs; no lengths. The seeds
    of one layer make the cells they made before."""
    rng = random.Random(seed)
    c = Cell(rng)
    H = rng.choice([3, 4, 6, 8])
    T = rng.choice([1, 4, 6])
    B = rng.choice([1, 3])
    in_dims = [rng.choice([2, 3, 5])] + ([rng.choice([2, 4])] if rng.random() < 0.3 else [])
    n_states = rng.choice([1, 1, 2, 3])
    reverse = rng.random() < 0.4
    lengths = rng.random() < 0.3
    if layers > 1:
        in_dims[0] = H
        lengths = False

    seqs = [c.arg('x', tensor(None, None, k)) for k in in_dims]
    c.shapes += [f'{T}x{B}x{k}' for k in in_dims]
    if lengths:
        len_arg = c.arg('len', 'tensor<?xi32>')
        c.shapes.append(f'{B}')
    inits = [c.arg('s0_', tensor(None, H)) for _ in range(n_states)]
    c.shapes += [f'{B}x{H}'] * n_states

    # Cell arguments and the pools of values by feature size.
    slices = [c.fresh('xt') for _ in in_dims]
    states = [c.fresh('s') for _ in range(n_states)]
    by_k = {}          # K -> [B, K] values usable as a product operand
    for s, k in zip(slices, in_dims):
        by_k.setdefault(k, []).append(s)
    hidden = list(states)       # [B, H] values
    computed = []               # [B, H] values computed in the cell

    def weight(k):
        w = c.arg('w', f'tensor<{H}x{k}xf32>')
        if rng.random() < 0.1:  # a weight computed in the cell
            w2 = c.fresh('wc')
            c.emit(f'{w2} = arith.mulf {w}, {w} : tensor<{H}x{k}xf32>')
            return w2
        return w

    def vec():
        b = c.arg('b', f'tensor<{H}xf32>')
        if rng.random() < 0.1:  # a bias computed in the cell
            b2 = c.fresh('bc')
            c.emit(f'{b2} = arith.addf {b}, {b} : tensor<{H}xf32>')
            return b2
        return b

    # A value computed from an input slice, multiplied later: not hoistable.
    if rng.random() < 0.3:
        k = in_dims[0]
        v = c.fresh('xc')
        c.emit(f'{v} = arith.mulf {slices[0]}, {slices[0]} : {tensor(None, k)}')
        by_k.setdefault(k, []).append(v)

    acts = ['sigmoid', 'tanh', 'relu', 'identity']
    for _ in range(rng.randint(2, 5)):
        ins, ws = [], []
        for _ in range(rng.randint(1, 3)):
            if rng.random() < 0.55:
                k = rng.choice(sorted(by_k))
                operand = rng.choice(by_k[k])
            else:
                k = H
                operand = rng.choice(hidden)
            ins.append((operand, k))
            ws.append(weight(k))
        parts = [f'{rng.choice(acts)} ({", ".join(o for o, _ in ins)} : '
                 f'{", ".join(tensor(None, k) for _, k in ins)}) '
                 f'weights({", ".join(ws)} : {", ".join(f"tensor<{H}x{k}xf32>" for _, k in ins)})']
        if computed and rng.random() < 0.3:
            a = rng.choice(computed)
            parts.append(f'add({a} : {tensor(None, H)})')
        nb = rng.choice([0, 1, 1, 2])
        if nb:
            parts.append(f'bias({", ".join(vec() for _ in range(nb))} : '
                         f'{", ".join([f"tensor<{H}xf32>"] * nb)})')
        if rng.random() < 0.25:
            p = c.arg('p', f'tensor<{H}xf32>')
            parts.append(f'peephole({p}, {rng.choice(hidden)} : tensor<{H}xf32>, {tensor(None, H)})')
        g = c.fresh('g')
        c.emit(f'{g} = lstm.gate {" ".join(parts)} -> {tensor(None, H)}')
        hidden.append(g)
        computed.append(g)
        # Some pointwise math on what exists so far.
        for _ in range(rng.randint(0, 2)):
            op = rng.choice(['addf', 'mulf', 'subf', 'tanh', 'one_minus'])
            v = c.fresh('v')
            t = tensor(None, H)
            if op == 'tanh':
                c.emit(f'{v} = math.tanh {rng.choice(hidden)} : {t}')
            elif op == 'one_minus':
                c.emit(f'{v} = lstm.one_minus {rng.choice(computed)} : {t}')
            else:
                c.emit(f'{v} = arith.{op} {rng.choice(hidden)}, {rng.choice(computed)} : {t}')
            hidden.append(v)
            computed.append(v)

    # New state: bounded through tanh so that long recurrences stay finite.
    new_states = []
    for _ in states:
        v = c.fresh('n')
        c.emit(f'{v} = math.tanh {rng.choice(computed)} : {tensor(None, H)}')
        new_states.append(v)
    n_out = rng.choice([0, 1, 1, 2])
    if layers > 1:
        n_out = max(n_out, 1)
    outs = [rng.choice(computed + new_states) for _ in range(n_out)]

    t = tensor(None, H)
    yield_line = 'lstm.yield '
    if outs:
        yield_line += f'out({", ".join(outs)} : {", ".join([t] * n_out)}) '
    yield_line += f'state({", ".join(new_states)} : {", ".join([t] * n_states)})'
    c.emit(yield_line)

    seq_t = [tensor(None, None, k) for k in in_dims]
    out_types = [tensor(None, None, H)] * n_out
    fin_types = [t] * n_states
    if layers > 1:
        return _stack(c, layers, seqs, inits, slices, states, seq_t,
                      [tensor(None, k) for k in in_dims], out_types, fin_types, reverse, f'{layers} layers of H={H} I={in_dims} T={T} B={B} '
                      f'states={n_states} {"reverse" if reverse else "forward"}')
    results = [c.fresh('y') for _ in range(n_out)] + [c.fresh('f') for _ in range(n_states)]
    lines = [f'func.func @forward({", ".join(f"{n}: {ty}" for n, ty in c.args)})',
             f'    -> ({", ".join(out_types + fin_types)}) {{',
             f'  {", ".join(results)} = lstm.layer {"reverse" if reverse else "forward"} '
             f'ins({", ".join(seqs)} : {", ".join(seq_t)}) '
             f'init({", ".join(inits)} : {", ".join(fin_types)})'
             + (f' lengths({len_arg} : tensor<?xi32>)' if lengths else '')
             + f' -> ({", ".join(out_types)}), ({", ".join(fin_types)}) {{',
             f'  ^bb0({", ".join(f"{s}: {tensor(None, k)}" for s, k in zip(slices, in_dims))}, '
             f'{", ".join(f"{s}: {t}" for s in states)}):']
    lines += c.body
    lines += ['  }', f'  return {", ".join(results)} : {", ".join(out_types + fin_types)}', '}']
    desc = (f'H={H} I={in_dims} T={T} B={B} states={n_states} '
            f'{"reverse" if reverse else "forward"}{" lengths" if lengths else ""}')
    return '\n'.join(lines) + '\n', ','.join(c.shapes), desc


def _stack(c, layers, seqs, inits, slices, states, seq_t, slice_t, out_types, fin_types,
           reverse, desc):
    """The module of `layers` copies of the cell in `c` (see build)."""
    n_seqs, n_states = len(seqs), len(inits)
    weights = c.args[n_seqs + n_states:]

    def renamed(text, names, k):
        for name, _ in names:
            text = re.sub(re.escape(name) + r'(?![0-9A-Za-z_])', f'{name}_{k}', text)
        return text

    args = [(n, ty) for n, ty in c.args[:n_seqs]]
    args += [(f'{n}_{k}', ty) for k in range(layers) for n, ty in c.args[n_seqs:n_seqs + n_states]]
    args += [(f'{n}_{k}', ty) for k in range(layers) for n, ty in weights]
    shapes = c.shapes[:n_seqs] + c.shapes[n_seqs:n_seqs + n_states] * layers
    t = fin_types[0]
    lines = [f'func.func @forward({", ".join(f"{n}: {ty}" for n, ty in args)})',
             f'    -> ({", ".join(out_types + fin_types * layers)}) {{']
    below, results = seqs[0], []
    for k in range(layers):
        outs = [f'%y{k}_{j}' for j in range(len(out_types))]
        finals = [f'%f{k}_{j}' for j in range(n_states)]
        lines += [f'  {", ".join(outs + finals)} = lstm.layer {"reverse" if reverse else "forward"} '
                  f'ins({", ".join([below] + seqs[1:])} : {", ".join(seq_t)}) '
                  f'init({", ".join(f"{n}_{k}" for n in inits)} : {", ".join(fin_types)})'
                  f' -> ({", ".join(out_types)}), ({", ".join(fin_types)}) {{',
                  f'  ^bb0({", ".join(f"{s}: {ty}" for s, ty in zip(slices, slice_t))}, '
                  f'{", ".join(f"{s}: {t}" for s in states)}):']
        lines += [renamed(line, weights, k) for line in c.body]
        lines.append('  }')
        below = outs[0]
        results += finals
    results = outs + results
    lines += [f'  return {", ".join(results)} : {", ".join(out_types + fin_types * layers)}', '}']
    return '\n'.join(lines) + '\n', ','.join(shapes), desc


def rel_err(out, ref):
    out, ref = out.astype(np.float64), ref.astype(np.float64)
    n = np.linalg.norm(ref)
    return np.linalg.norm(out - ref) / (n if n > 0 else 1.0)


def run_cell(args, seed, tmp):
    """Checks one seed; returns (ok, report lines)."""
    text, shapes, desc = build(seed, args.layers)
    base = os.path.join(tmp, f'cell{seed}')
    pipelines = PIPELINES + (STACK_PIPELINES if args.layers > 1 else [])
    src = base + '.mlir'
    with open(src, 'w') as f:
        f.write(text)
    report = [f'seed {seed}: {desc} ({src})']
    results = {}
    for name, flags in pipelines:
        mlir = src
        if flags:
            mlir = f'{base}.{name}.mlir'
            proc = subprocess.run([args.lstm_opt, src, *flags, '-verify-each', '-o', mlir],
                                  capture_output=True, text=True)
            if proc.returncode != 0:
                return False, report + [f'  {name}: lstm-opt failed:\n{proc.stderr}']
        outdir = f'{base}.{name}.out'
        os.makedirs(outdir, exist_ok=True)
        # -O0 (lstm-run --opt-level): the check is what the code computes.
        # Hoisted projections (lstm-hoist-by-threads) as they are for odd
        # seeds, in the steps (one thread) for even ones.
        hoisting = '--hoist-min-threads=1' if seed % 2 else '--cpu-threads=1'
        proc = subprocess.run([args.lstm_run, mlir, '--opt-level=0', '--entry=forward',
                               hoisting, '--random-inputs',
                               f'--seed={seed}', f'--shapes={shapes}', f'--outputs={outdir}'],
                              capture_output=True, text=True)
        if proc.returncode != 0:
            return False, report + [f'  {name}: lstm-run failed:\n{proc.stderr}']
        results[name] = [np.load(os.path.join(outdir, f))
                         for f in sorted(os.listdir(outdir), key=lambda s: int(s[:-4]))]
    ref_name = pipelines[0][0]
    ref = results[ref_name]
    ok = True
    for r in ref:
        if not np.isfinite(r).all():
            ok = False
            report.append(f'  {ref_name}: NaN/Inf in the unoptimised outputs')
    for name, _ in pipelines[1:]:
        outs = results[name]
        if len(outs) != len(ref):
            ok = False
            report.append(f'  {name}: {len(outs)} results, expected {len(ref)}')
            continue
        errs = []
        for k, (o, r) in enumerate(zip(outs, ref)):
            if o.shape != r.shape:
                ok = False
                report.append(f'  {name}: result {k} shape {o.shape}, expected {r.shape}')
            elif not np.isfinite(o).all():
                ok = False
                report.append(f'  {name}: result {k} has NaN/Inf')
            else:
                e = rel_err(o, r)
                errs.append(e)
                if not e <= args.tol:
                    ok = False
                    report.append(f'  {name}: result {k} relative error {e:.3e} > {args.tol:g}')
        loops = ''
        if args.layers > 1 and name != ref_name:
            with open(f'{base}.{name}.mlir') as f:
                loops = f' ({f.read().count("lstm.wavefront_layers")} wavefront loops)'
        report.append(f'  {name}: max rel err {max(errs, default=0.0):.2e}{loops}')
    return ok, report


def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--lstm-opt', required=True)
    p.add_argument('--lstm-run', required=True)
    p.add_argument('--seeds', default=DEFAULT_SEEDS)
    p.add_argument('--tol', type=float, default=1e-5)
    p.add_argument('--jobs', type=int, default=2)
    p.add_argument('--keep', help='write the cells and outputs here (default: a temporary directory)')
    p.add_argument('--layers', type=int, default=1,
                   help='stack each cell this many layers deep (build)')
    p.add_argument('--print', dest='print_seed', type=int,
                   help='print the cell of this seed and exit')
    args = p.parse_args()
    if args.print_seed is not None:
        print(build(args.print_seed, args.layers)[0], end='')
        return 0
    seeds = [int(s) for s in args.seeds.split(',')]
    with tempfile.TemporaryDirectory(prefix='random_cells_') as tmpdir:
        tmp = args.keep or tmpdir
        os.makedirs(tmp, exist_ok=True)
        with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
            results = list(pool.map(lambda s: run_cell(args, s, tmp), seeds))
        failed = 0
        for ok, report in results:
            print('\n'.join(report))
            failed += not ok
        what = f'random {args.layers}-layer stacks' if args.layers > 1 else 'random cells'
        pipelines = len(PIPELINES) - 1 + (len(STACK_PIPELINES) if args.layers > 1 else 0)
        print(f'{len(seeds) - failed} of {len(seeds)} {what} passed ({pipelines} pipelines each)')
        if failed:
            print('FAILED (rerun with --keep DIR to inspect, --print SEED for a cell)')
        return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
