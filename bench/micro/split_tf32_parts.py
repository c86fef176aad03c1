#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""A 3xTF32 product in parts: one after another or as one batch (GPU machine).

lstm-split-tf32-gemms cuts a product deeper than max-depth (1024) into P
parts of K/P terms, each a TF32 product of depth 3K/P on split operands.
For products of a step's shapes, timed as CUDA graphs of 10 calls (µs a
product), by cuBLAS through PyTorch:

  fp32         C = A·B in fp32 FMAs (cuBLAS spreads a deep K itself)
  seq          the parts one after another, each added to C (beta = 1):
               what the pass emits
  batched      the P parts as one batched product into P partial results
  batched+sum  the same and their fp32 sum into C
  one 3K       one TF32 product of depth 3K (no parts: too inexact past
               1024 terms, for its time only)

The operands are random (the times do not depend on the values).
docs/passes.md, "min-part-outputs"; docs/benchmarks.md, "The backward's
step products".

  python3 bench/micro/split_tf32_parts.py
"""
import torch


def graph_us(fn, reps=200):
    """µs per call of `fn`, replayed as a CUDA graph of 10 calls."""
    for _ in range(10):
        fn()
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        fn()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(10):
            fn()
    g.replay()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(True), torch.cuda.Event(True)
    start.record()
    for _ in range(reps // 10):
        g.replay()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) / reps * 1000


def main():
    # M x K x N and the parts of K: large's backward step dh = dG·R at B =
    # 128 and 256, its forward step at B = 128, appleyard's backward link,
    # deepbench's backward step at B = 128, large's at B = 512.
    shapes = [(128, 8192, 2048, 8), (128, 2048, 8192, 2), (64, 2048, 512, 2),
              (256, 8192, 2048, 8), (128, 4096, 1024, 4), (512, 8192, 2048, 8)]
    print(f"{'M x K x N':>18} {'parts':>5} {'fp32':>7} {'seq':>7} {'batched':>8} "
          f"{'batched+sum':>11} {'one 3K':>7}")
    for M, K, N, P in shapes:
        A = torch.randn(M, K, device='cuda')
        B = torch.randn(K, N, device='cuda')
        kp = K // P
        A3 = torch.randn(P, M, 3 * kp, device='cuda')
        B3 = torch.randn(P, 3 * kp, N, device='cuda')
        C = torch.empty(M, N, device='cuda')
        partial = torch.empty(P, M, N, device='cuda')
        A1 = torch.randn(M, 3 * K, device='cuda')
        B1 = torch.randn(3 * K, N, device='cuda')
        torch.backends.cuda.matmul.allow_tf32 = False
        fp32 = graph_us(lambda: torch.mm(A, B, out=C))
        torch.backends.cuda.matmul.allow_tf32 = True

        def seq():
            torch.mm(A3[0], B3[0], out=C)
            for p in range(1, P):
                C.addmm_(A3[p], B3[p])

        def batched():
            torch.bmm(A3, B3, out=partial)

        def batched_sum():
            torch.bmm(A3, B3, out=partial)
            torch.sum(partial, 0, out=C)

        one = graph_us(lambda: torch.mm(A1, B1, out=C))
        print(f"{M:>5} x{K:>5} x{N:>5} {P:>5} {fp32:7.1f} {graph_us(seq):7.1f} "
              f"{graph_us(batched):8.1f} {graph_us(batched_sum):11.1f} {one:7.1f}", flush=True)


if __name__ == '__main__':
    main()
