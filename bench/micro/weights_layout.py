#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""A step's product with its weights kept [N, K] or transposed [K, N]
(GPU machine): cuBLAS's "T" and "N" forms through torch.bmm in fp32, the
weights read from the L2 cache (the same copy every run) and from memory
(runs reading in turn copies that take 256 MiB), µs a product, each timed
as 50 products in a CUDA graph (docs/benchmarks.md, "A step's weights
transposed where cuBLAS runs them faster").

  python3 bench/micro/weights_layout.py
"""
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
from run_gpu import graph_ms  # noqa: E402

PRODUCTS = 50
SHAPES = [  # name, batch, rows, depth, columns
    ("Cho's GRU's r ⊙ h, appleyard B=16", 4, 16, 512, 512),
    ("Cho's GRU's r ⊙ h, appleyard B=64", 4, 64, 512, 512),
    ("forward diagonal, appleyard B=16", 8, 16, 512, 2048),
    ("forward diagonal, appleyard B=64", 8, 64, 512, 2048),
    ("Cho's GRU's diagonal, appleyard B=64", 8, 64, 512, 1536),
    ("backward diagonal, appleyard B=16", 4, 16, 2048, 1024),
    ("backward diagonal, appleyard B=64", 4, 64, 2048, 1024),
    ("step, large B=32", 2, 32, 2048, 8192),
    ("step, deepbench B=64", 1, 64, 1024, 4096),
    ("step, char-rnn B=50", 2, 50, 128, 512),
]


def per_product_us(a, weights, out, transposed):
    """µs a product, the runs reading `weights` in turn."""
    def products():
        for i in range(PRODUCTS):
            w = weights[i % len(weights)]
            torch.bmm(a, w if transposed else w.transpose(1, 2), out=out)
    return graph_ms(products) * 1e3 / PRODUCTS


def main():
    torch.backends.cuda.matmul.allow_tf32 = False
    print(f"{'product':40} {'cache: [K,N]':>13} {'[N,K]':>7} {'memory: [K,N]':>14} {'[N,K]':>7}")
    for name, batch, rows, depth, cols in SHAPES:
        a = torch.randn(batch, rows, depth, device='cuda')
        out = torch.empty(batch, rows, cols, device='cuda')
        copies = max(1, (256 << 20) // (batch * depth * cols * 4))
        kn = [torch.randn(batch, depth, cols, device='cuda') for _ in range(copies)]
        nk = [w.transpose(1, 2).contiguous() for w in kn]
        times = [per_product_us(a, ws[:n], out, t)
                 for n in (1, copies) for ws, t in ((kn, True), (nk, False))]
        print(f'{name:40} {times[0]:13.2f} {times[1]:7.2f} {times[2]:14.2f} {times[3]:7.2f}',
              flush=True)


if __name__ == '__main__':
    main()
