/* lstm-cpu-runtime-test: the CPU runtime's entry points (CpuRuntime.h)
 * against a direct computation, on the cases generated code can hand them
 * and the BLAS alone would refuse or mishandle:
 *   - every transpose combination, batches with their strides, beta 0 and 1,
 *     float and double;
 *   - leading dimensions larger than a row (views into wider buffers);
 *   - a one-row matrix whose view carries a stride shorter than its row;
 *   - a leading dimension shorter than a row on several rows (overlapping
 *     rows of a broadcast view), which the BLAS refuses: computed directly;
 *   - k = 0 (C = beta·C), m = 0 or n = 0 (nothing), and a NaN in C under
 *     beta = 0 (overwritten, not propagated);
 *   - the allocation functions: sizes above and below the cached size,
 *     reuse of a freed block, alignment, free() of a returned block;
 *   - memrefCopy between views: dense, padded rows, a non-unit innermost
 *     stride, an axis of one element with any stride, empty, rank 0;
 *   - the thread count: set, read back, products computed with two;
 *   - prepared products (B packed once, then used on several A and C):
 *     every transpose, alpha and beta, wider leading dimensions, and the
 *     shapes oneDNN does not take (k = 0, m = 0), which fall back;
 *   - the parallel-for of generated loops: every iteration of a range not
 *     starting at 0 covered once, in one part per thread when the work is
 *     large, in one call when it is small or there is one thread, none for
 *     an empty range.
 * Prints one line per group and "OK"; exits nonzero on a mismatch. */

// RUN: lstm-cpu-runtime-test | FileCheck %s
// The same with products split into blocks of 4 (sizes beyond the BLAS's
// 32-bit ints are split the same way):
// RUN: lstm-cpu-runtime-blocks-test | FileCheck %s
// CHECK-NOT: FAIL
// CHECK: OK
#include "lstm/Runtime/CpuRuntime.h"

#include <malloc.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned long long state = 88172645463325252ULL;
static double uniform(void) {
  state ^= state << 13;
  state ^= state >> 7;
  state ^= state << 17;
  return (double)(state >> 11) / 9007199254740992.0 * 2.0 - 1.0;
}

static int failures = 0;

/* C[i][j] = alpha * sum_p A(i,p) B(p,j) + beta * C[i][j], in double. */
static void reference(int ta, int tb, int64_t m, int64_t n, int64_t k,
                      double alpha, const double *a, int64_t lda,
                      const double *b, int64_t ldb, double beta, double *c,
                      int64_t ldc) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t p = 0; p < k; ++p)
        s += (ta ? a[p * lda + i] : a[i * lda + p]) *
             (tb ? b[j * ldb + p] : b[p * ldb + j]);
      c[i * ldc + j] = alpha * s + (beta == 0 ? 0 : beta * c[i * ldc + j]);
    }
}

/* One strided batched product in float and in double against the
 * reference; `lda` etc. of 0 mean "the row length". */
static void check(const char *what, int ta, int tb, int64_t m, int64_t n,
                  int64_t k, int64_t lda, int64_t ldb, int64_t ldc,
                  int64_t batch, float beta) {
  int64_t aRows = ta ? k : m, aCols = ta ? m : k;
  int64_t bRows = tb ? n : k, bCols = tb ? k : n;
  if (!lda)
    lda = aCols;
  if (!ldb)
    ldb = bCols;
  if (!ldc)
    ldc = n;
  /* Buffers large enough for the views whatever their strides. */
  int64_t aSize = (aRows ? (aRows - 1) * lda + aCols : 0) + 1;
  int64_t bSize = (bRows ? (bRows - 1) * ldb + bCols : 0) + 1;
  int64_t cSize = (m ? (m - 1) * ldc + n : 0) + 1;
  int64_t sa = aSize + 3, sb = bSize + 5, sc = cSize + 7;
  double *ad = malloc(sizeof(double) * sa * batch);
  double *bd = malloc(sizeof(double) * sb * batch);
  double *cd = malloc(sizeof(double) * sc * batch);
  double *cref = malloc(sizeof(double) * sc * batch);
  float *af = malloc(sizeof(float) * sa * batch);
  float *bf = malloc(sizeof(float) * sb * batch);
  float *cf = malloc(sizeof(float) * sc * batch);
  for (int64_t i = 0; i < sa * batch; ++i)
    af[i] = (float)(ad[i] = uniform());
  for (int64_t i = 0; i < sb * batch; ++i)
    bf[i] = (float)(bd[i] = uniform());
  for (int64_t i = 0; i < sc * batch; ++i)
    cf[i] = (float)(cd[i] = cref[i] = uniform());
  if (beta == 0 && m > 0 && n > 0) /* a NaN that beta = 0 must not keep */
    cf[0] = (float)(cd[0] = cref[0] = NAN);
  for (int64_t i = 0; i < batch; ++i)
    reference(ta, tb, m, n, k, 1.0, ad + i * sa, lda, bd + i * sb, ldb, beta,
              cref + i * sc, ldc);
  lstmRuntimeCpuSgemm(ta, tb, m, n, k, 1.0f, af, lda, sa, bf, ldb, sb, beta, cf,
                      ldc, sc, batch);
  lstmRuntimeCpuDgemm(ta, tb, m, n, k, 1.0f, ad, lda, sa, bd, ldb, sb, beta, cd,
                      ldc, sc, batch);
  double errF = 0, errD = 0;
  for (int64_t i = 0; i < sc * batch; ++i) {
    if (isnan(cref[i]) != isnan(cf[i]) || isnan(cref[i]) != isnan(cd[i])) {
      errF = errD = INFINITY;
      break;
    }
    if (isnan(cref[i]))
      continue;
    double scale = 1 + fabs(cref[i]);
    errF = fmax(errF, fabs(cf[i] - cref[i]) / scale);
    errD = fmax(errD, fabs(cd[i] - cref[i]) / scale);
  }
  /* float: k products of values below 1, rounded to float. */
  int ok = errF <= 1e-6 * (k + 1) && errD <= 1e-13 * (k + 1);
  printf("%-44s ta=%d tb=%d m=%lld n=%lld k=%lld batch=%lld: float %.2g "
         "double %.2g %s\n",
         what, ta, tb, (long long)m, (long long)n, (long long)k,
         (long long)batch, errF, errD, ok ? "ok" : "FAIL");
  failures += !ok;
  free(ad);
  free(bd);
  free(cd);
  free(cref);
  free(af);
  free(bf);
  free(cf);
}

static void checkAllocation(void) {
  /* Large blocks come back for a later allocation of their size. */
  void *a = _mlir_memref_to_llvm_aligned_alloc(64, 1 << 20);
  int ok = a != NULL && ((uintptr_t)a % 64) == 0;
  memset(a, 1, 1 << 20);
  _mlir_memref_to_llvm_free(a);
  void *b = _mlir_memref_to_llvm_aligned_alloc(64, 1 << 20);
  ok &= b == a;
  /* A block returned to a caller may be released with free(). */
  free(b);
  void *small = _mlir_memref_to_llvm_alloc(100);
  ok &= small != NULL;
  _mlir_memref_to_llvm_free(small);
  _mlir_memref_to_llvm_free(NULL);
  void *c = _mlir_memref_to_llvm_alloc(3 << 20);
  _mlir_memref_to_llvm_free(c);
  lstmRuntimeCpuEmptyCache();
  printf("%-44s %s\n", "allocation: reuse, alignment, free()",
         ok ? "ok" : "FAIL");
  failures += !ok;
}

/* lstmRuntimeCpuSgemmPrepare once, then lstmRuntimeCpuSgemmPrepared on three
 * different A (and C) with the same B, against the reference. */
static void checkPrepared(const char *what, int ta, int tb, int64_t m,
                          int64_t n, int64_t k, int64_t pad, float alpha,
                          float beta) {
  int64_t aRows = ta ? k : m, aCols = ta ? m : k;
  int64_t bRows = tb ? n : k, bCols = tb ? k : n;
  int64_t lda = aCols + pad, ldb = bCols + pad, ldc = n + pad;
  int64_t sa = aRows * lda + 1, sb = bRows * ldb + 1, sc = m * ldc + 1;
  double *ad = malloc(sizeof(double) * sa), *bd = malloc(sizeof(double) * sb);
  double *cref = malloc(sizeof(double) * sc);
  float *af = malloc(sizeof(float) * sa), *bf = malloc(sizeof(float) * sb);
  float *cf = malloc(sizeof(float) * sc);
  for (int64_t i = 0; i < sb; ++i)
    bf[i] = (float)(bd[i] = uniform());
  void *plan = lstmRuntimeCpuSgemmPrepare(ta, tb, m, n, k, alpha, lda, bf, ldb,
                                          beta, ldc);
  double err = 0;
  for (int call = 0; call < 3; ++call) {
    for (int64_t i = 0; i < sa; ++i)
      af[i] = (float)(ad[i] = uniform());
    for (int64_t i = 0; i < sc; ++i)
      cf[i] = (float)(cref[i] = uniform());
    reference(ta, tb, m, n, k, alpha, ad, lda, bd, ldb, beta, cref, ldc);
    lstmRuntimeCpuSgemmPrepared(plan, af, cf);
    for (int64_t i = 0; i < sc; ++i)
      err = fmax(err, fabs(cf[i] - cref[i]) / (1 + fabs(cref[i])));
  }
  lstmRuntimeCpuSgemmRelease(plan);
  int ok = err <= 1e-6 * (k + 1);
  printf("%-44s ta=%d tb=%d m=%lld n=%lld k=%lld: %.2g %s\n", what, ta, tb,
         (long long)m, (long long)n, (long long)k, err, ok ? "ok" : "FAIL");
  failures += !ok;
  free(ad);
  free(bd);
  free(cref);
  free(af);
  free(bf);
  free(cf);
}

static void checkPreparedProducts(void) {
  for (int ta = 0; ta < 2; ++ta)
    for (int tb = 0; tb < 2; ++tb) {
      checkPrepared("prepared", ta, tb, 9, 40, 24, 0, 1.0f, 0.0f);
      checkPrepared("prepared, alpha, accumulate, padded", ta, tb, 5, 33, 17, 3,
                    0.5f, 1.0f);
    }
  checkPrepared("prepared step of a recurrent layer", 0, 1, 32, 512, 128, 0,
                1.0f, 0.0f);
  checkPrepared("prepared, k = 0 (falls back)", 0, 1, 4, 6, 0, 0, 1.0f, 1.0f);
  checkPrepared("prepared, m = 0 (falls back)", 0, 1, 0, 6, 5, 0, 1.0f, 0.0f);
}

/* A ranked memref descriptor of rank <= 3 and its unranked form. */
struct Descriptor3 {
  float *base, *data;
  int64_t offset, sizes[3], strides[3];
};
struct Unranked {
  int64_t rank;
  void *descriptor;
};

static void checkCopy(const char *what, int rank, const int64_t *sizes,
                      const int64_t *srcStrides, const int64_t *dstStrides) {
  int64_t srcSpan = 1, dstSpan = 1, count = 1;
  for (int axis = 0; axis < rank; ++axis) {
    srcSpan += (sizes[axis] - 1) * srcStrides[axis];
    dstSpan += (sizes[axis] - 1) * dstStrides[axis];
    count *= sizes[axis];
  }
  if (count == 0)
    srcSpan = dstSpan = 1;
  /* Views start 3 elements into their buffers (a non-zero offset). */
  float *src = malloc((srcSpan + 3) * sizeof(float));
  float *dst = malloc((dstSpan + 3) * sizeof(float));
  for (int64_t i = 0; i < srcSpan + 3; ++i)
    src[i] = (float)uniform();
  for (int64_t i = 0; i < dstSpan + 3; ++i)
    dst[i] = -7.0f;
  struct Descriptor3 s = {src, src, 3, {0}, {0}}, d = {dst, dst, 3, {0}, {0}};
  for (int axis = 0; axis < rank; ++axis) {
    s.sizes[axis] = d.sizes[axis] = sizes[axis];
    s.strides[axis] = srcStrides[axis];
    d.strides[axis] = dstStrides[axis];
  }
  /* The descriptor of rank r keeps its r sizes then its r strides. */
  int64_t srcWords[9], dstWords[9];
  memcpy(srcWords, &s, 3 * sizeof(int64_t));
  memcpy(dstWords, &d, 3 * sizeof(int64_t));
  for (int axis = 0; axis < rank; ++axis) {
    srcWords[3 + axis] = sizes[axis];
    srcWords[3 + rank + axis] = srcStrides[axis];
    dstWords[3 + axis] = sizes[axis];
    dstWords[3 + rank + axis] = dstStrides[axis];
  }
  struct Unranked us = {rank, srcWords}, ud = {rank, dstWords};
  memrefCopy(sizeof(float), &us, &ud);
  /* Every element of the view copied, nothing outside it written. */
  int ok = 1;
  char *written = calloc(dstSpan + 3, 1);
  int64_t index[3] = {0, 0, 0};
  for (int64_t e = 0; e < count; ++e) {
    int64_t from = 3, to = 3, rest = e;
    for (int axis = rank - 1; axis >= 0; --axis) {
      index[axis] = rest % sizes[axis];
      rest /= sizes[axis];
      from += index[axis] * srcStrides[axis];
      to += index[axis] * dstStrides[axis];
    }
    ok &= dst[to] == src[from];
    written[to] = 1;
  }
  for (int64_t i = 0; i < dstSpan + 3; ++i)
    ok &= written[i] || dst[i] == -7.0f;
  printf("%-44s %s\n", what, ok ? "ok" : "FAIL");
  failures += !ok;
  free(written);
  free(src);
  free(dst);
}

static void checkCopies(void) {
  int64_t sizes[3] = {4, 5, 6};
  int64_t dense[3] = {30, 6, 1}, padded[3] = {70, 12, 1};
  int64_t columnMajor[3] = {1, 4, 20};
  checkCopy("memrefCopy: dense to dense", 3, sizes, dense, dense);
  checkCopy("memrefCopy: padded rows to dense", 3, sizes, padded, dense);
  checkCopy("memrefCopy: dense to padded rows", 3, sizes, dense, padded);
  checkCopy("memrefCopy: to a non-unit innermost stride", 3, sizes, dense,
            columnMajor);
  int64_t oneRow[3] = {4, 1, 6}, oddStride[3] = {6, 999, 1},
          denseOne[3] = {6, 6, 1};
  checkCopy("memrefCopy: axis of one element, any stride", 3, oneRow, oddStride,
            denseOne);
  int64_t empty[3] = {0, 5, 6};
  checkCopy("memrefCopy: empty", 3, empty, dense, dense);
  checkCopy("memrefCopy: rank 0", 0, sizes, dense, dense);
}

static void checkThreads(void) {
  lstmRuntimeCpuSetThreads(2);
  int ok = lstmRuntimeCpuGetThreads() == 2;
  printf("%-44s %s\n", "threads: set and read back", ok ? "ok" : "FAIL");
  failures += !ok;
  check("two threads, projection-sized", 0, 1, 300, 96, 40, 0, 0, 0, 1, 0.0f);
  lstmRuntimeCpuSetThreads(1);
  check("one thread, step-sized", 0, 1, 16, 64, 32, 0, 0, 0, 2, 1.0f);
  lstmRuntimeCpuSetThreads(0);
}

/* The parts a parallel-for called: how many, and how often each iteration
 * was covered. */
enum { kRange = 1000 };
static int coveredTimes[kRange];
static int parts;

static void coverPart(void *context, int64_t begin, int64_t end) {
  int *covered = (int *)context;
  for (int64_t i = begin; i < end; ++i)
    __atomic_fetch_add(&covered[i], 1, __ATOMIC_RELAXED);
  __atomic_fetch_add(&parts, 1, __ATOMIC_RELAXED);
}

static void checkParallelFor(const char *what, int threads, int64_t lo,
                             int64_t hi, int64_t work, int expectedParts) {
  lstmRuntimeCpuSetThreads(threads);
  memset(coveredTimes, 0, sizeof(coveredTimes));
  parts = 0;
  lstmRuntimeCpuParallelFor(coverPart, coveredTimes, lo, hi, work);
  int ok = parts == expectedParts;
  for (int64_t i = 0; i < kRange; ++i)
    ok &= coveredTimes[i] == (i >= lo && i < hi ? 1 : 0);
  printf("%-44s %s\n", what, ok ? "ok" : "FAIL");
  if (!ok)
    printf("  %d parts, expected %d\n", parts, expectedParts);
  failures += !ok;
  lstmRuntimeCpuSetThreads(0);
}

static void checkParallelFors(void) {
  checkParallelFor("parallel-for: two threads, large work", 2, 5, 105, 1 << 20,
                   2);
  checkParallelFor("parallel-for: two threads, small work", 2, 5, 105, 1, 1);
  checkParallelFor("parallel-for: one thread", 1, 0, kRange, 1 << 20, 1);
  checkParallelFor("parallel-for: more threads than iterations", 4, 7, 9,
                   1 << 30, 2);
  checkParallelFor("parallel-for: work that overflows", 2, 0, kRange,
                   INT64_MAX / 2, 2);
  checkParallelFor("parallel-for: empty range", 2, 9, 9, 1 << 20, 0);
  checkParallelFor("parallel-for: reversed range", 2, 9, 3, 1 << 20, 0);
}

/* Guarded calls: a packed function that finishes returns 0; one that fails
 * a check or an allocation returns 1 with its message (which goes to
 * stderr only unguarded), deeper guards restore the outer one, a failure in
 * a part of a parallel region returns from the call once the region is
 * over, and the blocks a failed call still held are freed (those it freed
 * itself once, those it returned from an earlier call not at all). */
static int reached;

static void finishes(void **arguments) { *(int *)arguments[0] = 42; }

static void runsOutOfMemory(void **arguments) {
  (void)arguments;
  lstmRuntimeCpuOutOfMemory(123456789, "net.mlir:3:7");
  reached = 1;
}

static void failsACheck(void **arguments) {
  (void)arguments;
  lstmRuntimeCpuCheckFailed(
      "lstm.layer: operand #1 has a different batch size");
  reached = 1;
}

static void guardsAnother(void **arguments) {
  int inner = lstmRuntimeCpuGuardedCall(failsACheck, arguments);
  *(int *)arguments[0] = inner;
  lstmRuntimeCpuOutOfMemory(7, "outer");
  reached = 1;
}

/* A block of 1 MiB: the size the allocator caches, so that a freed block
 * comes back from the next allocation of its size. */
enum { kBlock = 1 << 20 };
static void *heldBlock, *freedBlock;

static void allocatesThenFails(void **arguments) {
  (void)arguments;
  heldBlock = _mlir_memref_to_llvm_alloc(kBlock);
  freedBlock = _mlir_memref_to_llvm_alloc(kBlock);
  _mlir_memref_to_llvm_free(freedBlock);
  lstmRuntimeCpuOutOfMemory(kBlock, "held");
  reached = 1;
}

static void returnsABlock(void **arguments) {
  *(void **)arguments[1] = _mlir_memref_to_llvm_aligned_alloc(64, kBlock);
}

/* Iterations [lo, hi) of a part; the part with iteration 900 allocates a
 * block and fails. */
static int partsDone;
static void failsInAPart(void *context, int64_t begin, int64_t end) {
  (void)context;
  if (begin <= 900 && 900 < end) {
    heldBlock = _mlir_memref_to_llvm_alloc(kBlock);
    lstmRuntimeCpuCheckFailed("a check in a part");
    reached = 1;
  }
  __atomic_fetch_add(&partsDone, 1, __ATOMIC_RELAXED);
}

static void runsAParallelFor(void **arguments) {
  (void)arguments;
  lstmRuntimeCpuParallelFor(failsInAPart, NULL, 0, kRange, 1 << 20);
  reached = 1;
}

/* A product's plan (its packed weights) made in a guarded call that then
 * fails. */
static float planWeights[512 * 512];
static void preparesThenFails(void **arguments) {
  (void)arguments;
  lstmRuntimeCpuSgemmPrepare(0, 1, 64, 512, 512, 1.0f, 512, planWeights, 512,
                             0.0f, 512);
  lstmRuntimeCpuCheckFailed("after a plan");
  reached = 1;
}

/* Bytes malloc has handed out and not taken back (mmap'd blocks included). */
static size_t heapInUse(void) {
  struct mallinfo2 info = mallinfo2();
  return info.uordblks + info.hblkhd;
}

static void checkGuardedCallsFreeBlocks(void) {
  void *returned = NULL;
  int value = 0;
  void *arguments[] = {&value, &returned};
  lstmRuntimeCpuEmptyCache();
  int ok = lstmRuntimeCpuGuardedCall(returnsABlock, arguments) == 0 &&
           returned != NULL;
  reached = 0;
  ok &=
      lstmRuntimeCpuGuardedCall(allocatesThenFails, arguments) == 1 && !reached;
  // The two blocks are back in the cache, once each: the next two
  // allocations of their size take them, the third is new (and not the
  // block the first call returned, which is still the caller's).
  void *first = _mlir_memref_to_llvm_alloc(kBlock);
  void *second = _mlir_memref_to_llvm_alloc(kBlock);
  void *third = _mlir_memref_to_llvm_alloc(kBlock);
  ok &= (first == heldBlock && second == freedBlock) ||
        (first == freedBlock && second == heldBlock);
  ok &= third != heldBlock && third != freedBlock && third != returned &&
        first != returned && second != returned;
  printf("%-44s %s\n", "guarded call: a failed call's blocks freed",
         ok ? "ok" : "FAIL");
  failures += !ok;
  _mlir_memref_to_llvm_free(first);
  _mlir_memref_to_llvm_free(second);
  _mlir_memref_to_llvm_free(third);
  _mlir_memref_to_llvm_free(returned);

  // A part of two threads' region fails: the call returns 1 with the
  // part's message, the other part finished, the failing part's block is
  // freed.
  lstmRuntimeCpuEmptyCache();
  lstmRuntimeCpuSetThreads(2);
  reached = partsDone = 0;
  heldBlock = NULL;
  ok = lstmRuntimeCpuGuardedCall(runsAParallelFor, arguments) == 1 &&
       !reached && partsDone == 1 &&
       strcmp(lstmRuntimeCpuLastFailure(), "a check in a part") == 0;
  void *again = _mlir_memref_to_llvm_alloc(kBlock);
  ok &= heldBlock != NULL && again == heldBlock;
  printf("%-44s %s\n", "guarded call: a failure in a parallel region",
         ok ? "ok" : "FAIL");
  if (!ok)
    printf("  reached %d, parts done %d, '%s'\n", reached, partsDone,
           lstmRuntimeCpuLastFailure());
  failures += !ok;
  _mlir_memref_to_llvm_free(again);
  lstmRuntimeCpuSetThreads(0);

  // The plans of failed calls are deleted: ten of them (a megabyte of
  // packed weights each) leave the heap as it was, give or take one.
  lstmRuntimeCpuEmptyCache();
  lstmRuntimeCpuGuardedCall(preparesThenFails, arguments);
  size_t before = heapInUse();
  for (int i = 0; i < 10; ++i)
    lstmRuntimeCpuGuardedCall(preparesThenFails, arguments);
  size_t after = heapInUse();
  ok = after < before + sizeof(planWeights);
  printf("%-44s %s\n", "guarded call: a failed call's plans deleted",
         ok ? "ok" : "FAIL");
  if (!ok)
    printf("  heap in use %zu -> %zu bytes\n", before, after);
  failures += !ok;
}

static void checkGuardedCalls(void) {
  int value = 0;
  void *arguments[] = {&value};
  if (lstmRuntimeCpuGuardedCall(finishes, arguments) != 0 || value != 42) {
    printf("FAIL guarded call: a finished call returned 1 or did not run\n");
    ++failures;
  }
  if (lstmRuntimeCpuGuardedCall(runsOutOfMemory, arguments) != 1 || reached ||
      strcmp(lstmRuntimeCpuLastFailure(),
             "lstm: out of memory: cannot allocate a buffer of 123456789 "
             "bytes (for the value made at net.mlir:3:7)") != 0) {
    printf("FAIL guarded call: out of memory returned or said '%s'\n",
           lstmRuntimeCpuLastFailure());
    ++failures;
  }
  value = 0;
  if (lstmRuntimeCpuGuardedCall(guardsAnother, arguments) != 1 || reached ||
      value != 1 ||
      strcmp(lstmRuntimeCpuLastFailure(),
             "lstm: out of memory: cannot allocate a buffer of "
             "7 bytes (for the value made at outer)") != 0) {
    printf("FAIL guarded call: nested guards (inner %d, '%s')\n", value,
           lstmRuntimeCpuLastFailure());
    ++failures;
  }
}

int main(void) {
  lstmRuntimeCpuSetThreads(0);
  if (lstmRuntimeCpuGetThreads() < 1) {
    printf("FAIL: %d threads\n", lstmRuntimeCpuGetThreads());
    return 1;
  }
  for (int ta = 0; ta < 2; ++ta)
    for (int tb = 0; tb < 2; ++tb) {
      check("plain", ta, tb, 7, 9, 5, 0, 0, 0, 1, 0.0f);
      check("accumulate, batched", ta, tb, 6, 4, 11, 0, 0, 0, 3, 1.0f);
      check("leading dimensions wider than a row", ta, tb, 5, 8, 6, 13, 17, 19,
            2, 1.0f);
    }
  check("one row, stride shorter than the row", 0, 1, 1, 32, 16, 3, 0, 2, 1,
        0.0f);
  check("one column of a transposed A", 1, 0, 1, 8, 4, 1, 0, 0, 1, 1.0f);
  check("overlapping rows (direct)", 0, 0, 4, 6, 5, 2, 0, 0, 2, 1.0f);
  check("overlapping rows of B (direct)", 0, 1, 4, 6, 5, 0, 3, 0, 1, 0.0f);
  check("k = 0, beta = 0", 0, 0, 3, 4, 0, 0, 0, 0, 2, 0.0f);
  check("k = 0, beta = 1", 0, 1, 3, 4, 0, 0, 0, 0, 1, 1.0f);
  check("m = 0", 0, 0, 0, 4, 3, 0, 0, 0, 1, 0.0f);
  check("n = 0", 1, 1, 3, 0, 3, 0, 0, 0, 1, 1.0f);
  check("char-rnn step", 0, 1, 50, 512, 128, 0, 0, 0, 1, 0.0f);
  checkAllocation();
  checkCopies();
  checkThreads();
  checkPreparedProducts();
  checkParallelFors();
  checkGuardedCalls();
  checkGuardedCallsFreeBlocks();
  if (failures) {
    printf("%d FAILED\n", failures);
    return 1;
  }
  printf("OK\n");
  return 0;
}
