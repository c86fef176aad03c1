#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Wide layers through the persistent kernels on the GPU: a layer whose
warps keep their weights in registers only in 256-thread blocks (H = 544:
68 weights a lane; H = 1000: 128, a width that is no multiple of 32) or
not at all (H = 2048: 256 a lane, read from memory at every step), for
the LSTM, the peephole LSTM and Cho's GRU, compiled with gradients and
`--persistent`. Checks the forward's outputs and every gradient of
`forward_grad` against float64 eager autograd (bench/train_gpu.py's cells)
on fresh random inputs, at batches under the cost model's bound (the
kernels) and above it (the per-step lowering).

  # where MLIR is, for each CELL in lstm peephole cho_gru and H in 544 1000 2048:
  python3 bench/make_network.py --cell CELL --layers 1 --hidden H --input 24 -o DIR/CELL_hH.mlir
  python3 test/GPU/signature.py --tools build/bin --gradients --pre-passes=lstm-optimize \
      DIR/CELL_hH.mlir -o DIR/CELL_hH.sig.json
  lstm-compile DIR/CELL_hH.mlir --target=cuda --gradients \
      '--pre-passes=lstm-optimize{wavefront=false}' --persistent -o DIR/CELL_hH.so
  # where the GPU is:
  python3 test/GPU/check_wide_layers.py DIR [SEED]

Tolerances: 1e-5 on the outputs (VARIANTS.md's fp32), 1e-4 on the
gradients (sums over T · B more terms). Prints a line per case and
"PASSED" or "FAILED" last; exits non-zero on a failure.

With --precision tf32 or bf16, the LSTM and Cho's GRU at H = 544 and 1000
compiled with `--compute-type=PREC` into DIR/CELL_hH_PREC.so: at
H = 1000 their kernels on tensor cores with the depth split the cost model
chooses (the dot products stop at B = 4-5 there), at H = 544 (five units
a block, which no split pairs) the dot products, at batches below the tensor
cores' first (the dot products), within their bound (16 to 32) and above
it (the per-step lowering), against the same float64 reference within
VARIANTS.md's TF32 tolerance (2e-3) and 2e-2 for bf16 on the outputs,
and scripts/gpu-check-grad.sh's 1e-2 and 5e-2 on the gradients.
"""
import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '..', '..', 'bench'))
sys.path.insert(0, HERE)
import torch  # noqa: E402
import train_gpu as tg  # noqa: E402
from grad_net import GradNet  # noqa: E402


def eager_lstm(L, T, B, leaves):
    """The LSTM in eager PyTorch (gates i, f, g, o), as train_gpu.py's cells."""
    x, h0, c0 = leaves[:3]
    inp, hs, cs = x, [], []
    for l in range(L):
        W, R, bW, bR = leaves[3 + 4 * l:7 + 4 * l]
        xp = torch.addmm(bW + bR, inp.reshape(T * B, -1), W.t()).reshape(T, B, -1)
        h, c, outs = h0[l], c0[l], []
        for t in range(T):
            i, f, g, o = torch.addmm(xp[t], h, R.t()).chunk(4, 1)
            c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
            h = torch.sigmoid(o) * torch.tanh(c)
            outs.append(h)
        inp = torch.stack(outs)
        hs.append(h)
        cs.append(c)
    return [inp, torch.stack(hs), torch.stack(cs)]


EAGER = dict(tg.EAGER, lstm=eager_lstm)


def check_networks(directory, cases, seed, input_size=24, tolerances=(1e-5, 1e-4),
                   suffix=''):
    """Each (L, H, cell, sizes) of `cases`: DIR/{cell}_l{L}_h{H}{suffix}.so
    (or DIR/{cell}_h{H}{suffix}.so for L = 1) against float64 eager autograd
    at each (T, B) of `sizes`, within `tolerances` (outputs, gradients).
    Returns (all passed, largest relative error)."""
    out_tol, grad_tol = tolerances
    worst = 0.0
    ok = True
    for L, H, cell, sizes in cases:
        name = (f'{cell}_h{H}' if L == 1 else f'{cell}_l{L}_h{H}') + suffix + '.so'
        net = GradNet(os.path.join(directory, name), device='cuda')
        for T, B in sizes:
            tg.CONFIGS['w'] = (L, H, B, T, input_size)
            x, h0, c0, cots = tg.make_data('w', 'cuda', seed + H + B)
            ws = tg.make_weights('w', cell, 'cuda', seed + H + B)
            args = [x, h0] + ([c0] if cell != 'cho_gru' else []) + ws
            cs = cots[:net.n_results]
            grads = net.call('forward_grad', args + cs, check=False)
            outs = net.call('forward', args, check=False)
            leaves = [a.double().detach().requires_grad_() for a in args]
            ref = EAGER[cell](L, T, B, leaves)
            torch.autograd.backward(ref, [c.double() for c in cs])
            e_out = max(tg.rel_err(o, r) for o, r in zip(outs, ref))
            e_grad = max(tg.rel_err(g, l.grad) for g, l in zip(grads, leaves))
            worst = max(worst, e_out, e_grad)
            bad = not (e_out < out_tol and e_grad < grad_tol)
            ok &= not bad
            print(f'{cell:9s}{suffix} L={L} H={H:5d} T={T} B={B:2d}: outputs {e_out:.1e} '
                  f'gradients {e_grad:.1e}{"  FAILED" if bad else ""}', flush=True)
    return ok, worst


def main():
    p = argparse.ArgumentParser()
    p.add_argument('dir')
    p.add_argument('seed', nargs='?', type=int,
                   default=int.from_bytes(os.urandom(4), 'little'))
    p.add_argument('--precision', choices=('fp32', 'tf32', 'bf16'), default='fp32')
    a = p.parse_args()
    print(f'seed {a.seed}')
    if a.precision == 'fp32':
        sizes = ((3, 1), (7, 3), (5, 4), (4, 6), (2, 17))
        ok, worst = check_networks(
            a.dir, [(1, H, cell, sizes) for H in (544, 1000, 2048)
                    for cell in ('lstm', 'peephole', 'cho_gru')], a.seed)
    else:
        sizes = ((3, 5), (4, 16), (3, 27), (2, 32), (2, 40))
        tolerances = (2e-3, 1e-2) if a.precision == 'tf32' else (2e-2, 5e-2)
        ok, worst = check_networks(
            a.dir, [(1, H, cell, sizes) for H in (544, 1000)
                    for cell in ('lstm', 'cho_gru')], a.seed,
            tolerances=tolerances, suffix='_' + a.precision)
    print(('PASSED' if ok else 'FAILED') + f': wide layers, largest relative error {worst:.1e}')
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main())
