// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// How fast cuBLAS runs the recurrent step's GEMM shapes (C[m×n] = A[m×k] ·
// W[n×k]ᵀ, row-major, as the runtime calls it): cublasGemmEx's default
// choice against every algorithm cublasLt's heuristic offers, each timed
// as 200 launches captured in a CUDA graph and replayed between two events
// (GPU time, without the host's launch overhead).
//
//   nvcc -O3 -arch=sm_90 -o gemm_algos bench/micro/gemm_algos.cu -lcublasLt
//   -lcublas
//   ./gemm_algos [fp32|tf32] [m,k,n ...] [--batch=B]
#include "graph_timer.h"

#include <cublasLt.h>
#include <cublas_v2.h>

#include <cstring>
#include <string>
#include <vector>

__global__ void fill(float *p, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x)
    p[i] = float((i * 2654435761u) % 1000) * 1e-3f - 0.5f;
}

int main(int argc, char **argv) {
  bool tf32 = argc > 1 && std::strcmp(argv[1], "tf32") == 0;
  std::vector<std::string> shapes;
  int batch = 1;
  for (int i = 2; i < argc; ++i) {
    if (std::strncmp(argv[i], "--batch=", 8) == 0)
      batch = std::atoi(argv[i] + 8);
    else
      shapes.push_back(argv[i]);
  }
  if (shapes.empty())
    shapes = {"64,512,2048",  "64,2048,512",  "64,1024,2048",
              "32,1024,4096", "32,4096,1024", "128,2048,8192",
              "50,128,512",   "50,512,128",   "256,512,2048"};
  cudaStream_t stream;
  CHECK(cudaStreamCreate(&stream));
  cublasHandle_t blas;
  CHECK_BLAS(cublasCreate(&blas));
  CHECK_BLAS(cublasSetStream(blas, stream));
  std::vector<cudaStream_t> sides(batch);
  std::vector<cublasHandle_t> sideBlas(batch);
  std::vector<cudaEvent_t> joinEvents(batch);
  cudaEvent_t forkEvent;
  CHECK(cudaEventCreateWithFlags(&forkEvent, cudaEventDisableTiming));
  for (int i = 0; i < batch; ++i) {
    CHECK(cudaStreamCreateWithFlags(&sides[i], cudaStreamNonBlocking));
    CHECK_BLAS(cublasCreate(&sideBlas[i]));
    CHECK_BLAS(cublasSetStream(sideBlas[i], sides[i]));
    CHECK(cudaEventCreateWithFlags(&joinEvents[i], cudaEventDisableTiming));
  }
  cublasLtHandle_t lt;
  CHECK_BLAS(cublasLtCreate(&lt));
  size_t workspaceBytes = 32 << 20;
  void *workspace;
  CHECK(cudaMalloc(&workspace, workspaceBytes));
  cublasComputeType_t compute =
      tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  for (const std::string &s : shapes) {
    int64_t m, k, n;
    if (std::sscanf(s.c_str(), "%ld,%ld,%ld", &m, &k, &n) != 3) {
      std::fprintf(stderr, "bad shape %s (m,k,n)\n", s.c_str());
      return 2;
    }
    float *a, *w, *c;
    CHECK(cudaMalloc(&a, m * k * 4));
    CHECK(cudaMalloc(&w, n * k * 4));
    CHECK(cudaMalloc(&c, m * n * 4));
    // Not zeros: some GPUs draw less power on them.
    fill<<<256, 256, 0, stream>>>(a, m * k);
    fill<<<256, 256, 0, stream>>>(w, n * k);
    CHECK(cudaGetLastError());
    float alpha = 1, beta = 0;
    // Column-major: Cᵀ[n×m] = W[n×k] · Aᵀ[k×m] (W row-major [n,k] is
    // column-major [k,n]: op T).
    float gemmEx = timeInGraph(stream, 200, [&] {
      CHECK_BLAS(cublasGemmEx(blas, CUBLAS_OP_T, CUBLAS_OP_N, n, m, k, &alpha,
                              w, CUDA_R_32F, k, a, CUDA_R_32F, k, &beta, c,
                              CUDA_R_32F, n, compute, CUBLAS_GEMM_DEFAULT));
    });
    double flops = 2.0 * m * n * k;
    std::printf("%s m=%ld k=%ld n=%ld: cublasGemmEx %.2f us (%.1f TFLOP/s)\n",
                tf32 ? "tf32" : "fp32", m, k, n, gemmEx, flops / gemmEx * 1e-6);

    cublasLtMatmulDesc_t op;
    CHECK_BLAS(cublasLtMatmulDescCreate(&op, compute, CUDA_R_32F));
    cublasOperation_t transa = CUBLAS_OP_T, transb = CUBLAS_OP_N;
    CHECK_BLAS(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA,
                                              &transa, sizeof(transa)));
    CHECK_BLAS(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB,
                                              &transb, sizeof(transb)));
    cublasLtMatrixLayout_t la, lb, lc;
    CHECK_BLAS(cublasLtMatrixLayoutCreate(&la, CUDA_R_32F, k, n, k));
    CHECK_BLAS(cublasLtMatrixLayoutCreate(&lb, CUDA_R_32F, k, m, k));
    CHECK_BLAS(cublasLtMatrixLayoutCreate(&lc, CUDA_R_32F, n, m, n));
    cublasLtMatmulPreference_t pref;
    CHECK_BLAS(cublasLtMatmulPreferenceCreate(&pref));
    CHECK_BLAS(cublasLtMatmulPreferenceSetAttribute(
        pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspaceBytes,
        sizeof(workspaceBytes)));
    cublasLtMatmulHeuristicResult_t results[32];
    int found = 0;
    CHECK_BLAS(cublasLtMatmulAlgoGetHeuristic(lt, op, la, lb, lc, lc, pref, 32,
                                              results, &found));
    float best = 1e30f, bestFree = 1e30f;
    int bestIndex = -1;
    for (int i = 0; i < found; ++i) {
      float us = timeInGraph(stream, 200, [&] {
        CHECK_BLAS(cublasLtMatmul(lt, op, &alpha, w, la, a, lb, &beta, c, lc, c,
                                  lc, &results[i].algo, workspace,
                                  workspaceBytes, stream));
      });
      if (us < best) {
        best = us;
        bestIndex = i;
      }
      if (results[i].workspaceSize == 0 && us < bestFree)
        bestFree = us;
      if (i == 0)
        std::printf("   heuristic #0: %.2f us\n", us);
    }
    std::printf("   best of %d heuristic algorithms: #%d %.2f us (%.1f TFLOP/s)"
                ", %.2fx cublasGemmEx; workspace %zu bytes; best without "
                "workspace %.2f us\n",
                found, bestIndex, best, flops / best * 1e-6, gemmEx / best,
                bestIndex >= 0 ? results[bestIndex].workspaceSize : 0,
                bestFree);
    // The same GEMM for `batch` independent operand sets (a wavefront's
    // layers): one strided batched call, one call after the other, and
    // one call per stream forked from the main stream by events (the
    // streams' GEMMs run side by side).
    if (batch > 1) {
      float *ab, *wb, *cb;
      CHECK(cudaMalloc(&ab, batch * m * k * 4));
      CHECK(cudaMalloc(&wb, batch * n * k * 4));
      CHECK(cudaMalloc(&cb, batch * m * n * 4));
      fill<<<256, 256, 0, stream>>>(ab, batch * m * k);
      fill<<<256, 256, 0, stream>>>(wb, batch * n * k);
      float batched = timeInGraph(stream, 100, [&] {
        CHECK_BLAS(cublasGemmStridedBatchedEx(
            blas, CUBLAS_OP_T, CUBLAS_OP_N, n, m, k, &alpha, wb, CUDA_R_32F, k,
            n * k, ab, CUDA_R_32F, k, m * k, &beta, cb, CUDA_R_32F, n, m * n,
            batch, compute, CUBLAS_GEMM_DEFAULT));
      });
      float looped = timeInGraph(stream, 100, [&] {
        for (int i = 0; i < batch; ++i)
          CHECK_BLAS(cublasGemmEx(
              blas, CUBLAS_OP_T, CUBLAS_OP_N, n, m, k, &alpha, wb + i * n * k,
              CUDA_R_32F, k, ab + i * m * k, CUDA_R_32F, k, &beta,
              cb + i * m * n, CUDA_R_32F, n, compute, CUBLAS_GEMM_DEFAULT));
      });
      float concurrent = timeInGraph(stream, 100, [&] {
        CHECK(cudaEventRecord(forkEvent, stream));
        for (int i = 0; i < batch; ++i) {
          CHECK(cudaStreamWaitEvent(sides[i], forkEvent));
          CHECK_BLAS(cublasGemmEx(sideBlas[i], CUBLAS_OP_T, CUBLAS_OP_N, n, m,
                                  k, &alpha, wb + i * n * k, CUDA_R_32F, k,
                                  ab + i * m * k, CUDA_R_32F, k, &beta,
                                  cb + i * m * n, CUDA_R_32F, n, compute,
                                  CUBLAS_GEMM_DEFAULT));
          CHECK(cudaEventRecord(joinEvents[i], sides[i]));
          CHECK(cudaStreamWaitEvent(stream, joinEvents[i]));
        }
      });
      std::printf("   batch %d: batched %.2f us, looped %.2f us, concurrent "
                  "(%d streams) %.2f us\n",
                  batch, batched, looped, batch, concurrent);
      CHECK(cudaFree(ab));
      CHECK(cudaFree(wb));
      CHECK(cudaFree(cb));
    }
    cublasLtMatmulPreferenceDestroy(pref);
    cublasLtMatrixLayoutDestroy(la);
    cublasLtMatrixLayoutDestroy(lb);
    cublasLtMatrixLayoutDestroy(lc);
    cublasLtMatmulDescDestroy(op);
    CHECK(cudaFree(a));
    CHECK(cudaFree(w));
    CHECK(cudaFree(c));
  }
  return 0;
}
