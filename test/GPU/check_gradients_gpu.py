#!/usr/bin/env python3
"""Checks the gradient functions of a network compiled for CUDA against torch.autograd.

  check_gradients_gpu.py LIBRARY.so --cell NAME [--tol 1e-5] [--sizes 1:1,5:3,9:300]
                         [--seed N] [--ref-device cuda|cpu] [--signature NET.sig.json]

LIBRARY.so comes from `lstm-compile --target=cuda --gradients` of
examples/NAME.mlir (scripts/gpu-compile-grad.sh), with NAME.sig.json beside
it (test/GPU/signature.py). For each size T:B, on fresh random inputs
(reference.make_inputs) and random cotangents of the results:

- @forward_grad runs on the GPU (PyTorch tensors, compiled_net.py); each of
  its gradients (one per float argument, in order) is compared with
  torch.autograd of the eager PyTorch reference (torch_reference.py) in
  float64: relative error ||g - ref|| / ||ref|| <= tol;
- @forward_train's results are compared with the float64 forward (<= tol),
  and @forward_backward on what it returned gives @forward_grad's gradients
  again (<= tol);
- NaN or Inf anywhere, a wrong shape or an argument written by the library
  fails.

For the ReLU RNN, whose gradient jumps where a pre-activation crosses 0, the
float64 reference takes the compiled forward's activation pattern (y > 0):
a pre-activation within rounding of 0 may fall on either side in float32,
and a single one changes a gradient by ~1e-3 of its norm.

Prints one line per size and 'PASSED: NAME' or 'FAILED: NAME' at the end,
with the largest error seen ('max rel err').
With --device cpu the library is a `--target=cpu` one and runs on CPU
tensors (to check this script where there is no GPU).
"""
import argparse
import os
import sys

import numpy as np
import torch

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, '..', 'Integration'))
import reference  # noqa: E402
import torch_reference  # noqa: E402
from grad_net import GradNet  # noqa: E402


def rel(a, b):
    """||a - b|| / ||b|| in float64 (||a|| when b is zero)."""
    a, b = a.detach().to('cpu', torch.float64), b.detach().to('cpu', torch.float64)
    n = float(b.norm())
    return float((a - b).norm()) / (n if n > 0 else 1.0)


def reference_results(cell, ts, pattern=None):
    if cell == 'rnn_relu' and pattern is not None:
        # ReLU with the compiled network's activation pattern, step by step.
        masks = iter(pattern)
        act = lambda a: a * next(masks)  # noqa: E731
        x, h0, W, R, bW, bR = ts
        y, (h,) = torch_reference.recur(torch_reference.rnn_cell(act)(W, R, bW, bR), x, (h0,))
        return [y, h]
    return torch_reference.forward(cell, ts)


def reference_gradients(cell, inputs, cots, device, pattern=None):
    """float64 results and gradients (one per float argument) of torch_reference."""
    ts = [torch.from_numpy(a).to(device) for a in inputs]
    ts = [t.double().requires_grad_() if t.is_floating_point() else t for t in ts]
    outs = reference_results(cell, ts, pattern)
    floats = [t for t in ts if t.requires_grad]
    grads = torch.autograd.grad(outs, floats, [c.to(device, torch.float64) for c in cots],
                                allow_unused=True)
    return ([o.detach() for o in outs],
            [torch.zeros_like(f) if g is None else g for f, g in zip(floats, grads)])


def finite(t):
    return bool(torch.isfinite(t).all())


def check_size(net, cell, T, B, rng, tol, dev, ref_dev):
    spec = reference.EXAMPLES[cell][0]
    names = [n for n, _, kind in spec if kind != 'lengths']
    inputs = reference.make_inputs(cell, T, B, rng)
    args = [torch.from_numpy(np.ascontiguousarray(a)).to(dev) for a in inputs]
    before = [a.clone() for a in args]
    fails = []

    # The shapes of the results: from the float64 reference (no pattern yet).
    with torch.no_grad():
        shapes = [tuple(o.shape) for o in torch_reference.forward(
            cell, [torch.from_numpy(a) for a in inputs])]
    cots = [torch.from_numpy(rng.standard_normal(s).astype(np.float32)) for s in shapes]
    cots_dev = [c.to(dev) for c in cots]

    trained = net.call('forward_train', args)
    results, saved = trained[:net.n_results], trained[net.n_results:]
    pattern = None
    if cell == 'rnn_relu':
        pattern = (results[0] > 0).to(ref_dev, torch.float64)
    ref_outs, ref_grads = reference_gradients(cell, inputs, cots, ref_dev, pattern)

    grads = net.call('forward_grad', args + cots_dev)
    again = net.call('forward_backward', args + results + saved + cots_dev)
    if dev == 'cuda':
        torch.cuda.synchronize()

    worst = {'grad': 0.0, 'forward': 0.0, 'backward': 0.0}
    if len(results) != len(ref_outs):
        fails.append(f'@forward_train returned {len(results)} results, expected {len(ref_outs)}')
    for k, (o, r) in enumerate(zip(results, ref_outs)):
        if tuple(o.shape) != tuple(r.shape):
            fails.append(f'result {k}: shape {list(o.shape)}, expected {list(r.shape)}')
        elif not finite(o):
            fails.append(f'result {k} of @forward_train: NaN/Inf')
        else:
            e = rel(o, r)
            worst['forward'] = max(worst['forward'], e)
            if not e <= tol:
                fails.append(f'result {k} of @forward_train: relative error {e:.3e} > {tol:g}')
    for k, s in enumerate(saved):
        if not finite(s):
            fails.append(f'saved value {k} of @forward_train: NaN/Inf')
    for label, gs in (('@forward_grad', grads), ('@forward_backward', again)):
        if len(gs) != len(names):
            fails.append(f'{label} returned {len(gs)} gradients for {len(names)} float arguments')
    for name, g, g2, r in zip(names, grads, again, ref_grads):
        if tuple(g.shape) != tuple(r.shape):
            fails.append(f'gradient of {name}: shape {list(g.shape)}, expected {list(r.shape)}')
            continue
        if not finite(g):
            fails.append(f'gradient of {name}: NaN/Inf')
            continue
        e = rel(g, r)
        worst['grad'] = max(worst['grad'], e)
        if not e <= tol:
            fails.append(f'gradient of {name}: relative error {e:.3e} > {tol:g} '
                         f'(norms {float(g.double().norm()):.4e} vs {float(r.norm()):.4e})')
        if tuple(g2.shape) != tuple(g.shape) or not finite(g2):
            fails.append(f'gradient of {name} from @forward_backward: shape '
                         f'{list(g2.shape)} or NaN/Inf')
            continue
        e = rel(g2, g)
        worst['backward'] = max(worst['backward'], e)
        if not e <= tol:
            fails.append(f'gradient of {name}: @forward_backward differs from @forward_grad '
                         f'by {e:.3e} > {tol:g}')
    for k, (a, b) in enumerate(zip(args, before)):
        if not torch.equal(a, b):
            fails.append(f'argument {k} was written by the library')
    return fails, worst


def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('library')
    p.add_argument('--cell', required=True, choices=sorted(reference.EXAMPLES))
    p.add_argument('--tol', type=float, default=1e-5,
                   help='bound on every relative error (fp32 1e-5, tf32 1e-2, bf16 5e-2)')
    p.add_argument('--sizes', default='1:1,5:3,9:300')
    p.add_argument('--seed', type=int, default=None)
    p.add_argument('--signature', default=None, help='default: LIBRARY with .sig.json')
    p.add_argument('--device', choices=['cuda', 'cpu'], default='cuda',
                   help='where the library runs (cpu: a --target=cpu library)')
    p.add_argument('--ref-device', choices=['cuda', 'cpu'], default=None,
                   help='where the float64 reference runs (default: --device)')
    args = p.parse_args()
    if args.device == 'cuda' and not torch.cuda.is_available():
        print(f'FAILED: {args.cell} (no CUDA device visible to PyTorch)')
        return 1
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    ref_dev = args.ref_device or args.device
    seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(4), 'little')
    rng = np.random.default_rng(seed)
    try:
        net = GradNet(args.library, args.signature, device=args.device)
    except (OSError, KeyError, ValueError) as e:
        print(f'{args.cell}: cannot load {args.library}: {e}')
        print(f'FAILED: {args.cell} (seed {seed})')
        return 1
    failed, overall = False, 0.0
    for size in args.sizes.split(','):
        T, B = (int(v) for v in size.split(':'))
        try:
            fails, worst = check_size(net, args.cell, T, B, rng, args.tol, args.device, ref_dev)
        except (RuntimeError, ValueError, KeyError) as e:
            fails, worst = [f'{type(e).__name__}: {e}'], {}
        w = max(worst.values(), default=float('nan'))
        overall = max(overall, w) if w == w else overall
        detail = ', '.join(f'{k} {v:.2e}' for k, v in worst.items())
        print(f'{args.cell} T={T} B={B}: max rel err {w:.2e} ({detail}) '
              f'{"FAIL" if fails else "OK"}', flush=True)
        for f in fails:
            print('  error: ' + f)
        failed |= bool(fails)
    print(('FAILED' if failed else 'PASSED')
          + f': {args.cell} (seed {seed}, max rel err {overall:.2e}, tolerance {args.tol:g})')
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
