#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Checks a benchmark LSTM library (bench/make_network.py --cell lstm, as
bench/compile.sh compiles it) against PyTorch's nn.LSTM in float64 on fresh
random inputs, at small sizes: what compute-sanitizer runs over where the
examples' sizes do not reach a lowering (a stack of H = 512 in one
persistent kernel, 256-thread blocks).

  python3 test/GPU/check_bench_lstm.py LIB.so --layers 2 --hidden 512 --input 512 [--sizes 3:2,5:1] [--tol 1e-5]
"""
import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compiled_net import CompiledNet  # noqa: E402


def main():
    p = argparse.ArgumentParser()
    p.add_argument('library')
    p.add_argument('--layers', type=int, required=True)
    p.add_argument('--hidden', type=int, required=True)
    p.add_argument('--input', type=int, required=True)
    p.add_argument('--sizes', default='3:2,5:1', help='T:B pairs')
    p.add_argument('--tol', type=float, default=1e-5)
    p.add_argument('--seed', type=int, default=None)
    a = p.parse_args()
    seed = a.seed if a.seed is not None else int.from_bytes(os.urandom(4), 'little')
    torch.manual_seed(seed)
    L, H, I = a.layers, a.hidden, a.input
    mod = torch.nn.LSTM(I, H, L).double().cuda()
    params = []
    for layer in range(L):
        params += [getattr(mod, f'{n}_l{layer}').detach().float()
                   for n in ('weight_ih', 'weight_hh', 'bias_ih', 'bias_hh')]
    net = CompiledNet(a.library)
    ok = True
    for size in a.sizes.split(','):
        T, B = (int(v) for v in size.split(':'))
        x = torch.rand(T, B, I, device='cuda', dtype=torch.float64) * 2 - 1
        h0 = torch.rand(L, B, H, device='cuda', dtype=torch.float64) * 2 - 1
        c0 = torch.rand(L, B, H, device='cuda', dtype=torch.float64) * 2 - 1
        with torch.no_grad():
            ref = mod(x, (h0, c0))
        outs = net([x.float(), h0.float(), c0.float()] + params, [3, 3, 3])
        err = max(float((o.double() - r).norm() / r.norm())
                  for o, r in zip(outs, (ref[0], *ref[1])))
        good = err <= a.tol
        ok &= good
        print(f'T={T} B={B}: max rel err {err:.2e} {"OK" if good else "FAILED"}')
    print(f'{"PASSED" if ok else "FAILED"} (seed {seed})')
    sys.exit(0 if ok else 1)


if __name__ == '__main__':
    main()
