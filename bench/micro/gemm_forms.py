#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""GEMM rates of benchmark step shapes on the GPU machine: cuBLAS called as the
runtime's lstmRuntimeGemmStridedBatched calls it (batched, TF32 and fp32), against
PyTorch's bmm of the same operands and of the transposed problem.

  python3 bench/micro/gemm_forms.py

Prints ms and TFLOP/s per (batch, m, k, n) and form (docs/benchmarks.md, "Batched
GEMMs"). Needs PyTorch with CUDA and cuBLAS 12 or 13."""
import ctypes, torch, sys
torch.backends.cuda.matmul.allow_tf32 = True
dev = 'cuda'
lib = None
for name in ('libcublas.so.13', 'libcublas.so.12', 'libcublas.so'):
    try:
        lib = ctypes.CDLL(name); break
    except OSError:
        pass
h = ctypes.c_void_p()
assert lib.cublasCreate_v2(ctypes.byref(h)) == 0
lib.cublasSetMathMode(h, 0)
stream = torch.cuda.current_stream().cuda_stream
lib.cublasSetStream_v2(h, ctypes.c_void_p(stream))
i64 = ctypes.c_int64
CUDA_R_32F = 0
COMPUTE_32F_FAST_TF32 = 77
COMPUTE_32F = 68
f = lib.cublasGemmStridedBatchedEx_64
f.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_int, i64, i64, i64, ctypes.c_void_p,
              ctypes.c_void_p, ctypes.c_int, i64, i64, ctypes.c_void_p, ctypes.c_int, i64, i64,
              ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int, i64, i64, i64, ctypes.c_int, ctypes.c_int]
alpha = ctypes.c_float(1.0); beta = ctypes.c_float(0.0)

def ours(A, Bt, C, batch, compute):
    # C[m,n] = A[m,k] · Bt[n,k]^T, row-major; column-major view C^T = Bt · A^T
    m, k = A.shape[-2:]; n = Bt.shape[-2]
    st = f(h, 1, 0, n, m, k, ctypes.byref(alpha), ctypes.c_void_p(Bt.data_ptr()), CUDA_R_32F, k, n * k,
           ctypes.c_void_p(A.data_ptr()), CUDA_R_32F, k, m * k, ctypes.byref(beta),
           ctypes.c_void_p(C.data_ptr()), CUDA_R_32F, n, m * n, batch, compute, -1)
    assert st == 0, st

def timeit(fn, reps=50):
    for _ in range(5): fn()
    torch.cuda.synchronize()
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record()
    for _ in range(reps): fn()
    e.record(); torch.cuda.synchronize()
    return s.elapsed_time(e) / reps

print(f"{'shape':40s} {'form':22s} {'ms':>8s} {'TFLOP/s':>8s}")
for (batch, m, k, n) in [(2, 128, 2048, 8192), (1, 128, 2048, 8192), (1, 128, 4096, 8192), (2, 64, 512, 2048), (1, 6400, 2048, 8192)]:
    A = torch.randn(batch, m, k, device=dev); Bt = torch.randn(batch, n, k, device=dev); C = torch.empty(batch, m, n, device=dev)
    flop = 2 * batch * m * n * k
    for form, fn in [
        ('ours tf32', lambda: ours(A, Bt, C, batch, COMPUTE_32F_FAST_TF32)),
        ('torch bmm tf32', lambda: torch.bmm(A, Bt.transpose(1, 2), out=C)),
        ('torch (W·hT) tf32', lambda: torch.bmm(Bt, A.transpose(1, 2))),
        ('ours fp32', lambda: ours(A, Bt, C, batch, COMPUTE_32F)),
    ]:
        ms = timeit(fn)
        print(f"{str((batch, m, k, n)):40s} {form:22s} {ms:8.3f} {flop / ms / 1e9:8.1f}")
