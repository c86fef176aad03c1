#!/usr/bin/env python3
"""Checks the eager PyTorch reference (test/GPU/torch_reference.py) on the CPU.

  check_torch_reference.py --tools DIR [--cells a,b] [--sizes 3:2] [--seed N] [--jobs 2]

torch_reference.py is the float64 reference of the gradient checks on the
GPU (test/GPU/check_gradients_gpu.py); before it is trusted there, for every
example of reference.EXAMPLES, on fresh random inputs (reference.make_inputs)
and random cotangents:

(a) its float64 forward equals the numpy reference (reference.expected),
    relative error <= 1e-12 per result;
(b) torch.autograd's float64 gradients of it equal the gradients that the
    compiler computes: the example made float64 (gradcheck.to_f64),
    transformed by lstm-differentiate, compiled for the CPU and called as
    @forward_grad (gradcheck.Library), relative error <= 1e-10 per gradient;
(c) where PyTorch has the network as a module (nn.LSTM, with lengths as a
    packed sequence, with proj_size, three layers, bidirectional; nn.GRU;
    nn.RNN), its forward and autograd gradients equal torch_reference's,
    relative error <= 1e-12 / 1e-10.

Both sides are float64 with the same inputs; what differs is the order of
the sums (and, in (b), the backward: hand-derived through AdjointOpInterface
against torch.autograd), so the bounds are a few thousand ulps.
"""
import argparse
import concurrent.futures
import os
import sys
import tempfile
import time

import numpy as np
import torch

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, '..', 'Integration'))
sys.path.insert(0, os.path.join(HERE, '..', 'GPU'))
import gradcheck  # noqa: E402
import reference  # noqa: E402
import torch_reference  # noqa: E402

FORWARD_TOL = 1e-12
GRADIENT_TOL = 1e-10
EXAMPLES_DIR = os.path.join(HERE, '..', '..', 'examples')


def rel(a, b):
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    n = np.linalg.norm(b)
    return np.linalg.norm(a - b) / (n if n > 0 else 1.0)


def autograd(cell, args, cots):
    """torch_reference's results and the gradients of sum <cot, result> with
    respect to every float argument (float64, CPU)."""
    ts = [torch.tensor(a, requires_grad=a.dtype.kind == 'f') for a in args]
    outs = torch_reference.forward(cell, ts)
    floats = [t for t in ts if t.requires_grad]
    grads = torch.autograd.grad(outs, floats, [torch.from_numpy(c) for c in cots],
                                allow_unused=True)
    grads = [torch.zeros_like(f) if g is None else g for f, g in zip(floats, grads)]
    return [o.detach().numpy() for o in outs], [g.numpy() for g in grads]


# ---------------------------------------------------------------------------
# (c) PyTorch's modules
# ---------------------------------------------------------------------------

def _lstm_params(a, layers=1, reverse=False):
    p = {}
    for k in range(layers):
        sfx = str(k) if layers > 1 else ''
        for name, key in (('weight_ih', 'W'), ('weight_hh', 'R'), ('bias_ih', 'bW'),
                          ('bias_hh', 'bR')):
            p[f'{name}_l{k}'] = a[key + sfx]
            if reverse:
                p[f'{name}_l{k}_reverse'] = a[key + '_rev']
    return p


def module_forward(cell, ts):
    """The example run by torch.nn's own module, or None if it has none."""
    from torch.func import functional_call
    a = dict(zip(torch_reference.arg_names(cell), ts))
    x = a.get('x')
    I = x.shape[2]
    f64 = dict(dtype=torch.float64)
    if cell in ('lstm', 'greff_np', 'varlen'):
        H = a['R'].shape[1]
        mod = torch.nn.LSTM(I, H, **f64)
        state = (a['h0'][None], a['c0'][None])
        if cell == 'varlen':
            packed = torch.nn.utils.rnn.pack_padded_sequence(
                x, a['lengths'].to(torch.int64), enforce_sorted=False)
            y, (h, c) = functional_call(mod, _lstm_params(a), (packed, state))
            y, _ = torch.nn.utils.rnn.pad_packed_sequence(y, total_length=x.shape[0])
        else:
            y, (h, c) = functional_call(mod, _lstm_params(a), (x, state))
        return [y, h[0], c[0]]
    if cell == 'lstmp':
        H, P = a['Whr'].shape[1], a['Whr'].shape[0]
        mod = torch.nn.LSTM(I, H, proj_size=P, **f64)
        p = _lstm_params(a)
        p['weight_hr_l0'] = a['Whr']
        y, (h, c) = functional_call(mod, p, (x, (a['h0'][None], a['c0'][None])))
        return [y, h[0], c[0]]
    if cell == 'stack3':
        mod = torch.nn.LSTM(I, a['R0'].shape[1], num_layers=3, **f64)
        y, (h, c) = functional_call(mod, _lstm_params(a, 3), (x, (a['h0'], a['c0'])))
        return [y, h, c]
    if cell == 'bidirectional':
        mod = torch.nn.LSTM(I, a['R'].shape[1], bidirectional=True, **f64)
        y, (h, c) = functional_call(mod, _lstm_params(a, reverse=True),
                                    (x, (a['h0'], a['c0'])))
        return [y, h, c]
    if cell in ('gru', 'rnn_tanh', 'rnn_relu'):
        H = a['R'].shape[1]
        mod = torch.nn.GRU(I, H, **f64) if cell == 'gru' else torch.nn.RNN(
            I, H, nonlinearity=cell[4:], **f64)
        y, h = functional_call(mod, _lstm_params(a), (x, a['h0'][None]))
        return [y, h[0]]
    return None


def check_module(cell, args, cots, outs, grads):
    ts = [torch.tensor(a, requires_grad=a.dtype.kind == 'f') for a in args]
    mouts = module_forward(cell, ts)
    if mouts is None:
        return None, []
    floats = [t for t in ts if t.requires_grad]
    mgrads = torch.autograd.grad(mouts, floats, [torch.from_numpy(c) for c in cots],
                                 allow_unused=True)
    mgrads = [torch.zeros_like(f) if g is None else g for f, g in zip(floats, mgrads)]
    fails, worst = [], 0.0
    for k, (m, o) in enumerate(zip(mouts, outs)):
        e = rel(o, m.detach().numpy())
        worst = max(worst, e)
        if not e <= FORWARD_TOL:
            fails.append(f'result {k}: torch_reference differs from torch.nn by {e:.2e}')
    for k, (m, g) in enumerate(zip(mgrads, grads)):
        e = rel(g, m.numpy())
        worst = max(worst, e)
        if not e <= GRADIENT_TOL:
            fails.append(f'gradient {k}: torch_reference differs from torch.nn by {e:.2e}')
    return worst, fails


# ---------------------------------------------------------------------------

def check(cell, lib, sizes, rng):
    spec = reference.EXAMPLES[cell][0]
    names = [n for n, _, _ in spec]
    if names != torch_reference.arg_names(cell):
        return [f'torch_reference takes ({", ".join(torch_reference.arg_names(cell))}), '
                f'reference.py ({", ".join(names)})'], []
    fails, lines = [], []
    for T, B in sizes:
        inputs = reference.make_inputs(cell, T, B, rng)
        args = [a.astype(np.float64) if a.dtype.kind == 'f' else a for a in inputs]
        expected = reference.expected(cell, inputs)
        cots = [rng.standard_normal(e.shape) for e in expected]
        outs, grads = autograd(cell, args, cots)
        here = []
        fw = 0.0
        for k, (o, e) in enumerate(zip(outs, expected)):
            if o.shape != e.shape:
                here.append(f'result {k}: shape {o.shape}, numpy reference {e.shape}')
                continue
            err = rel(o, e)
            fw = max(fw, err)
            if not err <= FORWARD_TOL:
                here.append(f'result {k}: relative error {err:.2e} against the numpy '
                            f'reference (tolerance {FORWARD_TOL:g})')
        ours = lib.call('forward_grad', *args, *cots)
        floats = [n for (n, _, kind) in spec if kind != 'lengths']
        gw = 0.0
        if len(ours) != len(grads):
            here.append(f'@forward_grad returned {len(ours)} gradients, torch {len(grads)}')
        for name, g, t in zip(floats, ours, grads):
            if g.shape != t.shape:
                here.append(f'gradient of {name}: shape {g.shape}, torch {t.shape}')
                continue
            err = rel(g, t)
            gw = max(gw, err)
            if not err <= GRADIENT_TOL:
                here.append(f'gradient of {name}: relative error {err:.2e} between '
                            f'@forward_grad and torch.autograd (tolerance {GRADIENT_TOL:g})')
        nn_err, nn_fails = check_module(cell, args, cots, outs, grads)
        here += nn_fails
        nn_text = f', torch.nn {nn_err:.1e}' if nn_err is not None else ''
        lines.append(f'{cell} T={T} B={B}: forward {fw:.1e}, gradients {gw:.1e}{nn_text} '
                     + ('FAIL' if here else 'OK'))
        lines += ['  error: ' + h for h in here]
        fails += here
    return fails, lines


def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--tools', required=True, help='directory with lstm-opt and lstm-compile')
    p.add_argument('--cells', default=','.join(reference.EXAMPLES))
    p.add_argument('--sizes', default='3:2')
    p.add_argument('--seed', type=int, default=None)
    p.add_argument('--jobs', type=int, default=2, help='compilations at once')
    a = p.parse_args()
    torch.set_num_threads(1)
    cells = a.cells.split(',')
    for c in cells:
        if c not in reference.EXAMPLES:
            p.error(f'unknown example {c}')
    sizes = [tuple(int(v) for v in s.split(':')) for s in a.sizes.split(',')]
    seed = a.seed if a.seed is not None else int.from_bytes(os.urandom(4), 'little')
    rng = np.random.default_rng(seed)
    start = time.time()
    failed = []
    with tempfile.TemporaryDirectory() as tmp:
        def build(cell):
            with open(os.path.join(EXAMPLES_DIR, cell + '.mlir')) as f:
                text = gradcheck.to_f64(f.read())
            work = os.path.join(tmp, cell)
            os.mkdir(work)
            return gradcheck.Library(text, a.tools, work, 'lstm-differentiate')

        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, a.jobs)) as pool:
            libs = {c: pool.submit(build, c) for c in cells}
            for cell in cells:  # in order, each as soon as its library is built
                try:
                    lib = libs[cell].result()
                except Exception as e:  # noqa: BLE001 - reported per example
                    print(f'{cell}: FAIL building the float64 library: {e}', flush=True)
                    failed.append(cell)
                    continue
                fails, lines = check(cell, lib, sizes, rng)
                print('\n'.join(lines), flush=True)
                if fails:
                    failed.append(cell)
    print(f'{len(cells) - len(failed)} of {len(cells)} examples passed in '
          f'{time.time() - start:.0f} s (seed {seed})')
    print(('FAILED: ' + ', '.join(failed)) if failed else 'PASSED: torch_reference')
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
