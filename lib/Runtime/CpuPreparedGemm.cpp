//===- CpuPreparedGemm.cpp - Products whose B is packed once --------------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// A time loop computes h·Rᵀ at every step with the same R. dnnl_sgemm
// repacks R into its kernels' blocked layout at every call; here R is
// reordered once, before the loop, into the layout oneDNN's matmul
// primitive chose for the product's shape, and every step runs the
// primitive on it (lstm-prepare-loop-gemms emits the three calls). On one
// core that is 1.2-1.35x dnnl_sgemm's rate on a step of 32 to 64 rows and
// 1.9x on one of 8 (docs/passes.md, "The CPU path"). oneDNN caches primitives
// by shape, so preparing again at the next call of the network costs a few
// microseconds and the reorder.
//
// Whatever oneDNN does not take (an error, an empty or unusual layout) runs
// through lstmRuntimeCpuSgemm at every step instead: same results.
//
//===----------------------------------------------------------------------===//

#include "CpuFailure.h"
#include "CpuThreads.h"
#include "lstm/Runtime/CpuRuntime.h"

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <new>
#include <oneapi/dnnl/dnnl.hpp>
#include <optional>

namespace {

using dnnl::memory;

/// The product's parameters, and the primitive with the packed B when
/// oneDNN took them.
struct PreparedGemm {
  int32_t transA, transB;
  int64_t m, n, k;
  float alpha;
  int64_t lda;
  const float *b;
  int64_t ldb;
  float beta;
  int64_t ldc;
  std::optional<dnnl::matmul> product;
  memory::desc aDesc, cDesc;
  std::optional<memory> packedB;
};

dnnl::engine &cpuEngine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

/// A row-major view of `rows` × `cols` with leading dimension `ld`, or its
/// transpose as stored.
memory::desc matrix(int64_t rows, int64_t cols, int64_t ld, bool transposed) {
  return memory::desc({rows, cols}, memory::data_type::f32,
                      transposed ? memory::dims{1, ld} : memory::dims{ld, 1});
}

/// Builds the primitive and packs B; leaves `g.product` empty where oneDNN
/// cannot.
void pack(PreparedGemm &g) {
  // The layouts lstmRuntimeCpuSgemm computes or splits itself.
  int64_t aRow = g.transA ? g.m : g.k, bRow = g.transB ? g.k : g.n;
  if (g.m <= 0 || g.n <= 0 || g.k <= 0 || g.lda < aRow || g.ldb < bRow ||
      g.ldc < g.n || g.m > INT_MAX || g.n > INT_MAX || g.k > INT_MAX)
    return;
  try {
    // A primitive is made for the thread count of its creation (and cached
    // by it), and the reorder runs threads too.
    lstm::applyCpuThreadCount();
    dnnl::engine &engine = cpuEngine();
    g.aDesc = matrix(g.m, g.k, g.lda, g.transA);
    g.cDesc = matrix(g.m, g.n, g.ldc, false);
    memory::desc anyB({g.k, g.n}, memory::data_type::f32,
                      memory::format_tag::any);
    dnnl::primitive_attr attr;
    if (g.alpha != 1.0f)
      attr.set_output_scales(0, {g.alpha});
    if (g.beta != 0.0f) {
      dnnl::post_ops sum;
      sum.append_sum(g.beta);
      attr.set_post_ops(sum);
    }
    dnnl::matmul::primitive_desc desc(
        dnnl::matmul::desc(g.aDesc, anyB, g.cDesc), attr, engine);
    memory given(matrix(g.k, g.n, g.ldb, g.transB), engine,
                 const_cast<float *>(g.b));
    memory packed(desc.weights_desc(), engine);
    dnnl::stream stream(engine);
    dnnl::reorder(given, packed).execute(stream, given, packed);
    stream.wait();
    g.product.emplace(desc);
    g.packedB.emplace(std::move(packed));
  } catch (const dnnl::error &) {
    g.product.reset();
    g.packedB.reset();
  }
}

void deletePlan(void *plan) { delete static_cast<PreparedGemm *>(plan); }

} // namespace

extern "C" {

void *lstmRuntimeCpuSgemmPrepare(int32_t transA, int32_t transB, int64_t m,
                                 int64_t n, int64_t k, float alpha, int64_t lda,
                                 const float *b, int64_t ldb, float beta,
                                 int64_t ldc) {
  auto *g = new (std::nothrow)
      PreparedGemm{transA, transB, m, n, k, alpha, lda, b, ldb, beta, ldc};
  if (!g) {
    // Back to a guarded call, or on stderr and abort: does not return.
    lstmRuntimeCpuOutOfMemory(sizeof(PreparedGemm), "a product's plan");
    std::abort();
  }
  pack(*g);
  // A failed guarded call deletes the plans it still holds.
  lstm::trackCpuResource(g, deletePlan);
  return g;
}

void lstmRuntimeCpuSgemmPrepared(void *plan, const float *a, float *c) {
  auto *g = static_cast<PreparedGemm *>(plan);
  if (g && g->product) {
    try {
      lstm::applyCpuThreadCount();
      dnnl::engine &engine = cpuEngine();
      memory aMem(g->aDesc, engine, const_cast<float *>(a));
      memory cMem(g->cDesc, engine, c);
      dnnl::stream stream(engine);
      g->product->execute(stream, {{DNNL_ARG_SRC, aMem},
                                   {DNNL_ARG_WEIGHTS, *g->packedB},
                                   {DNNL_ARG_DST, cMem}});
      stream.wait();
      return;
    } catch (const dnnl::error &) {
      // oneDNN checks the arguments before it writes C: computed below.
    }
  }
  lstmRuntimeCpuSgemm(g->transA, g->transB, g->m, g->n, g->k, g->alpha, a,
                      g->lda, 0, g->b, g->ldb, 0, g->beta, c, g->ldc, 0, 1);
}

void lstmRuntimeCpuSgemmRelease(void *plan) {
  lstm::untrackCpuResource(plan);
  deletePlan(plan);
}

} // extern "C"
