// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The CPU's GEMM libraries on the products of recurrent networks: a step's
// h·Rᵀ (batch rows × 4H columns × H terms, R row-major as PyTorch stores
// it) at several batches, the hoisted input projection (T·B rows), and the
// appleyard configuration's step. OpenBLAS (Debian's libopenblas, pthreads)
// against oneDNN's sgemm (libdnnl, OpenMP), the choice of
// lib/Runtime/CpuBlas.cpp, and the runtime's prepared product (B packed
// once, lib/Runtime/CpuPreparedGemm.cpp), what a time loop's step runs
// after lstm-prepare-loop-gemms. Each product runs 20 times to warm up, then
// enough times for about a second of work in all; GFLOP/s of the mean, and
// the largest difference between the results relative to the largest
// element. docs/benchmarks.md ("The CPU") has this machine's figures.
//   g++ -O2 -fopenmp -Iinclude -o cpu_gemm bench/micro/cpu_gemm.cpp \
//     -I/usr/include/x86_64-linux-gnu/openblas-pthread \
//     build/lib/liblstm_cpu_runtime_static.a \
//     -L/usr/lib/x86_64-linux-gnu/openblas-pthread -lopenblas -ldnnl &&
//   OMP_NUM_THREADS=1 ./cpu_gemm 1 && OMP_NUM_THREADS=2 ./cpu_gemm 2
#include "lstm/Runtime/CpuRuntime.h"

#include <algorithm>
#include <cblas.h>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <oneapi/dnnl/dnnl.h>
#include <vector>

namespace {

template <typename F> double secondsPerCall(F call, int reps) {
  for (int i = 0; i < 20; ++i)
    call();
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < reps; ++i)
    call();
  std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
  return took.count() / reps;
}

} // namespace

int main(int argc, char **argv) {
  int threads = argc > 1 ? std::atoi(argv[1]) : 1;
  openblas_set_num_threads(threads);
  lstmRuntimeCpuSetThreads(threads);
  struct Shape {
    const char *what;
    int m, n, k;
  } shapes[] = {{"step, B=8, H=128", 8, 512, 128},
                {"step, B=16, H=128", 16, 512, 128},
                {"step, B=32, H=128 (stack3)", 32, 512, 128},
                {"step, B=50, H=128 (charrnn)", 50, 512, 128},
                {"step, B=64, H=512 (appleyard)", 64, 2048, 512},
                {"projection, 1600 rows, I=64", 1600, 512, 64},
                {"projection, 2500 rows, I=128", 2500, 512, 128}};
  std::printf("%d thread(s); GFLOP/s\n%-44s %9s %9s %9s %9s\n", threads,
              "product (m x n x k)", "OpenBLAS", "oneDNN", "prepared",
              "rel.diff");
  std::srand(1);
  for (const Shape &s : shapes) {
    std::vector<float> a(size_t(s.m) * s.k), b(size_t(s.n) * s.k),
        c1(size_t(s.m) * s.n), c2(size_t(s.m) * s.n), c3(size_t(s.m) * s.n);
    for (float &x : a)
      x = std::rand() / float(RAND_MAX) - 0.5f;
    for (float &x : b)
      x = std::rand() / float(RAND_MAX) - 0.5f;
    double flops = 2.0 * s.m * s.n * s.k;
    int reps = std::max(20, int(1e11 / 2 / flops));
    double blas = secondsPerCall(
        [&] {
          cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, s.m, s.n, s.k,
                      1.0f, a.data(), s.k, b.data(), s.k, 0.0f, c1.data(), s.n);
        },
        reps);
    double dnnl = secondsPerCall(
        [&] {
          if (dnnl_sgemm('N', 'T', s.m, s.n, s.k, 1.0f, a.data(), s.k, b.data(),
                         s.k, 0.0f, c2.data(), s.n) != dnnl_success)
            std::abort();
        },
        reps);
    void *plan = lstmRuntimeCpuSgemmPrepare(0, 1, s.m, s.n, s.k, 1.0f, s.k,
                                            b.data(), s.k, 0.0f, s.n);
    double prepared = secondsPerCall(
        [&] { lstmRuntimeCpuSgemmPrepared(plan, a.data(), c3.data()); }, reps);
    lstmRuntimeCpuSgemmRelease(plan);
    float diff = 0, largest = 0;
    for (size_t i = 0; i < c1.size(); ++i) {
      diff =
          std::max({diff, std::fabs(c1[i] - c2[i]), std::fabs(c1[i] - c3[i])});
      largest = std::max(largest, std::fabs(c1[i]));
    }
    char label[64];
    std::snprintf(label, sizeof label, "%s %dx%dx%d", s.what, s.m, s.n, s.k);
    std::printf("%-44s %9.0f %9.0f %9.0f %9.1e\n", label, flops / blas / 1e9,
                flops / dnnl / 1e9, flops / prepared / 1e9, diff / largest);
  }
  return 0;
}
