// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A batch of L GEMMs C[l] = X[l] · W[l]ᵀ (X [L, M, K], W [L, N, K],
// row-major, as a wavefront's batched gate calls cuBLAS) against the same
// product split in K: S partial products a layer, one strided batched call
// of L·S matrices of depth K/S, their sums taken by a kernel after it. Two
// split forms: X and W transposed to [L, S, ·, K/S] first (a copy kernel
// each, W's once), and X laid out [M, L, K] by its producer so that the
// L·S slices are a strided batch as they are (lda = L·K). Everything
// timed as 100 launches captured in a CUDA graph (GPU time).
//
//   nvcc -O3 -arch=sm_90 -o gemm_splitk bench/micro/gemm_splitk.cu -lcublas
//   ./gemm_splitk [fp32|tf32] L,M,K,N [S ...]
#include "graph_timer.h"

#include <cublas_v2.h>

#include <cstring>
#include <vector>

__global__ void fill(float *p, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x)
    p[i] = float((i * 2654435761u) % 1000) * 1e-3f - 0.5f;
}

/// dst[l, s, r, k'] = src[l, r, s·Ks + k'] for src [L, R, S·Ks].
__global__ void splitTranspose(const float *src, float *dst, int64_t L,
                               int64_t R, int64_t S, int64_t Ks) {
  int64_t n = L * R * S * Ks;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    int64_t k = i % Ks, r = (i / Ks) % R, s = (i / (Ks * R)) % S,
            l = i / (Ks * R * S);
    dst[i] = src[(l * R + r) * S * Ks + s * Ks + k];
  }
}

/// dst[l, m, n] = Σ_s src[l, s, m, n].
__global__ void sumSplits(const float *src, float *dst, int64_t L, int64_t S,
                          int64_t MN) {
  int64_t n = L * MN;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    int64_t l = i / MN, j = i % MN;
    float acc = 0;
    for (int64_t s = 0; s < S; ++s)
      acc += src[(l * S + s) * MN + j];
    dst[i] = acc;
  }
}

int main(int argc, char **argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: gemm_splitk fp32|tf32 L,M,K,N [S ...]\n");
    return 2;
  }
  bool tf32 = std::strcmp(argv[1], "tf32") == 0;
  int64_t L, M, K, N;
  if (std::sscanf(argv[2], "%ld,%ld,%ld,%ld", &L, &M, &K, &N) != 4) {
    std::fprintf(stderr, "bad shape %s (L,M,K,N)\n", argv[2]);
    return 2;
  }
  std::vector<int64_t> splits;
  for (int i = 3; i < argc; ++i)
    splits.push_back(std::atol(argv[i]));
  if (splits.empty())
    splits = {2, 4, 8};
  cudaStream_t stream;
  CHECK(cudaStreamCreate(&stream));
  cublasHandle_t blas;
  CHECK_BLAS(cublasCreate(&blas));
  CHECK_BLAS(cublasSetStream(blas, stream));
  cublasComputeType_t compute =
      tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  float *x, *w, *c, *xt, *wt, *part;
  int64_t maxS = 1;
  for (int64_t s : splits)
    maxS = std::max(maxS, s);
  CHECK(cudaMalloc(&x, L * M * K * 4));
  CHECK(cudaMalloc(&w, L * N * K * 4));
  CHECK(cudaMalloc(&c, L * M * N * 4));
  CHECK(cudaMalloc(&xt, L * M * K * 4));
  CHECK(cudaMalloc(&wt, L * N * K * 4));
  CHECK(cudaMalloc(&part, maxS * L * M * N * 4));
  fill<<<256, 256, 0, stream>>>(x, L * M * K);
  fill<<<256, 256, 0, stream>>>(w, L * N * K);
  CHECK(cudaGetLastError());
  float alpha = 1, beta = 0;
  double flops = 2.0 * L * M * N * K;
  // Column-major: Cᵀ[N×M] = W[N×K] · Xᵀ[K×M] per matrix.
  float batched = timeInGraph(stream, 100, [&] {
    CHECK_BLAS(cublasGemmStridedBatchedEx(
        blas, CUBLAS_OP_T, CUBLAS_OP_N, N, M, K, &alpha, w, CUDA_R_32F, K,
        N * K, x, CUDA_R_32F, K, M * K, &beta, c, CUDA_R_32F, N, M * N, L,
        compute, CUBLAS_GEMM_DEFAULT));
  });
  std::printf("%s L=%ld M=%ld K=%ld N=%ld: batched %.2f us (%.1f TFLOP/s)\n",
              tf32 ? "tf32" : "fp32", L, M, K, N, batched,
              flops / batched * 1e-6);
  for (int64_t S : splits) {
    if (K % S) {
      std::printf("  S=%ld: K not a multiple\n", S);
      continue;
    }
    int64_t Ks = K / S;
    splitTranspose<<<1024, 256, 0, stream>>>(w, wt, L, N, S, Ks);
    CHECK(cudaGetLastError());
    float transposeX = timeInGraph(stream, 100, [&] {
      splitTranspose<<<1024, 256, 0, stream>>>(x, xt, L, M, S, Ks);
    });
    float gemm = timeInGraph(stream, 100, [&] {
      CHECK_BLAS(cublasGemmStridedBatchedEx(
          blas, CUBLAS_OP_T, CUBLAS_OP_N, N, M, Ks, &alpha, wt, CUDA_R_32F, Ks,
          N * Ks, xt, CUDA_R_32F, Ks, M * Ks, &beta, part, CUDA_R_32F, N, M * N,
          L * S, compute, CUBLAS_GEMM_DEFAULT));
    });
    float sum = timeInGraph(stream, 100, [&] {
      sumSplits<<<1024, 256, 0, stream>>>(part, c, L, S, M * N);
    });
    // X as [M, L, K] and W as [N, L, K]: slice (l, s) at (l·S + s)·Ks,
    // leading dimension L·K (the same buffers stand in: only the speed is
    // measured here).
    float strided = timeInGraph(stream, 100, [&] {
      CHECK_BLAS(cublasGemmStridedBatchedEx(
          blas, CUBLAS_OP_T, CUBLAS_OP_N, N, M, Ks, &alpha, w, CUDA_R_32F,
          L * K, Ks, x, CUDA_R_32F, L * K, Ks, &beta, part, CUDA_R_32F, N,
          M * N, L * S, compute, CUBLAS_GEMM_DEFAULT));
    });
    std::printf("  S=%ld: transpose X %.2f us, batched %ld×[%ld×%ld×%ld] "
                "%.2f us, sum %.2f us: %.2f us (%.2fx); X as [M, L, K]: "
                "%.2f us + sum = %.2f us (%.2fx)\n",
                S, transposeX, L * S, M, Ks, N, gemm, sum,
                transposeX + gemm + sum, batched / (transposeX + gemm + sum),
                strided, strided + sum, batched / (strided + sum));
  }
  return 0;
}
