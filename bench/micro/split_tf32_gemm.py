#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Where 3xTF32 GEMMs pay, and how exact they are (GPU machine).

One product C[M,N] = A[M,K]·B[K,N] (A ~ U(-1, 1), B ~ U(-1, 1)/sqrt(K)) by
cuBLAS through PyTorch: in fp32 (FMAs), and as lstm-split-tf32-gemms makes
it, one TF32 product of depth 3K on the operands split into TF32 parts
(x_hi rounded to TF32, x_lo = x - x_hi), the small terms last ("big-first",
timed) or first ("small-first", what the pass emits: the same time). Each
timed as a CUDA graph of 5 calls; errors norm-relative against float64,
TF32 alone beside them. docs/benchmarks.md, "3xTF32 GEMMs".

  python3 bench/micro/split_tf32_gemm.py
"""
import time

import torch
torch.backends.cuda.matmul.allow_tf32 = False
def split(x):
    hi = ((x.view(torch.int32) + 0x1000) & ~0x1FFF).view(torch.float32)
    return hi, x - hi
def bench(f, n=20):
    s = torch.cuda.Stream(); s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3): f()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(5): f()
    g.replay(); torch.cuda.synchronize()
    t = time.perf_counter()
    for _ in range(n): g.replay()
    torch.cuda.synchronize()
    return (time.perf_counter() - t) / n / 5 * 1e6
def nerr(C, ref): return ((C.double() - ref).norm() / ref.norm()).item()
print('| M | K | N | fp32 us | 3x us | speedup | err fp32 | err 3x big-first | err 3x small-first | err tf32 |')
for N in (2048, 8192):
  for K in (512, 1024, 2048, 6400):
    for M in (64, 128, 256, 512, 1024, 4096, 8192):
        if M * K * N > 8192 * 6400 * 2048: continue
        torch.manual_seed(0)
        A = torch.rand(M, K, device='cuda') * 2 - 1; B = (torch.rand(K, N, device='cuda') * 2 - 1) / K**0.5
        ref = A.double() @ B.double()
        Ah, Al = split(A); Bh, Bl = split(B)
        A3 = torch.cat([Ah, Ah, Al], 1).contiguous(); B3 = torch.cat([Bh, Bl, Bh], 0).contiguous()
        A3s = torch.cat([Al, Ah, Ah], 1).contiguous(); B3s = torch.cat([Bh, Bl, Bh], 0).contiguous()
        C = torch.empty(M, N, device='cuda')
        t32 = bench(lambda: torch.mm(A, B, out=C)); e32 = nerr(C, ref)
        torch.backends.cuda.matmul.allow_tf32 = True
        etf = nerr(torch.mm(A, B), ref)
        t3 = bench(lambda: torch.mm(A3, B3, out=C)); e3 = nerr(C, ref)
        torch.mm(A3s, B3s, out=C); e3s = nerr(C, ref)
        torch.backends.cuda.matmul.allow_tf32 = False
        print(f'| {M} | {K} | {N} | {t32:.1f} | {t3:.1f} | {t32/t3:.2f} | {e32:.1e} | {e3:.1e} | {e3s:.1e} | {etf:.1e} |', flush=True)
