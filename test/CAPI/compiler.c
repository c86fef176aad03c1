//===- compiler.c - Ahead-of-time compilation through the C API -----------===//
//
// Compiles an RNN cell to a shared library with lstmCompileToSharedLibrary,
// loads it and runs it on a small input whose result is known; an unknown
// target and a malformed pre-pass pipeline must fail with a diagnostic.
// Built as lstm-capi-compiler-test; its argument is a scratch directory.
//
//===----------------------------------------------------------------------===//

// RUN: rm -rf %t && mkdir -p %t
// RUN: lstm-capi-compiler-test %t 2>&1 | FileCheck %s

#include "rnn_module.h"

#include "lstm-c/Compiler.h"
#include "lstm-c/Registration.h"
#include "mlir-c/Diagnostics.h"
#include "mlir-c/IR.h"

#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define DESCRIPTOR(rank)                                                       \
  struct {                                                                     \
    float *allocated, *aligned;                                                \
    int64_t offset, sizes[rank], strides[rank];                                \
  }
typedef DESCRIPTOR(1) Memref1;
typedef DESCRIPTOR(2) Memref2;
typedef DESCRIPTOR(3) Memref3;
typedef struct {
  Memref3 y;
  Memref2 hT;
} Results;
typedef void (*ForwardFn)(Results *, Memref3 *, Memref2 *, Memref2 *, Memref2 *,
                          Memref1 *);

static void printToStderr(MlirStringRef str, void *userData) {
  (void)userData;
  fwrite(str.data, 1, str.length, stderr);
}

static MlirLogicalResult printDiagnostic(MlirDiagnostic diagnostic,
                                         void *userData) {
  (void)userData;
  fprintf(stderr, "diagnostic: ");
  mlirDiagnosticPrint(diagnostic, printToStderr, NULL);
  fprintf(stderr, "\n");
  return mlirLogicalResultSuccess();
}

static MlirContext createContext(void) {
  MlirDialectRegistry registry = mlirDialectRegistryCreate();
  lstmRegisterAllDialects(registry);
  MlirContext ctx = mlirContextCreateWithRegistry(registry, false);
  mlirDialectRegistryDestroy(registry);
  mlirContextAttachDiagnosticHandler(ctx, printDiagnostic, NULL, NULL);
  return ctx;
}

/// Compiles kRNN to `path` with `options`; prints and returns the outcome.
static int compile(const char *path, LstmCompileOptions options) {
  MlirContext ctx = createContext();
  MlirModule module =
      mlirModuleCreateParse(ctx, mlirStringRefCreateFromCString(kRNN));
  MlirLogicalResult result = lstmCompileToSharedLibrary(
      module, mlirStringRefCreateFromCString(path), &options);
  int ok = mlirLogicalResultIsSuccess(result);
  fprintf(stderr, "compile: %s\n", ok ? "success" : "failure");
  mlirModuleDestroy(module);
  mlirContextDestroy(ctx);
  return ok;
}

static void testCompileAndRun(const char *dir) {
  fprintf(stderr, "@compile_and_run\n");
  char path[4096];
  snprintf(path, sizeof path, "%s/rnn.so", dir);
  LstmCompileOptions options = lstmCompileOptionsDefault();
  options.target = mlirStringRefCreateFromCString("cpu");
  options.prePasses =
      mlirStringRefCreateFromCString("canonicalize,lstm-combine-gate-gemms");
  // Every pass verified, as a caller looking for a pass's bug would ask.
  options.verifyEachPass = true;
  if (!compile(path, options))
    return;
  // RTLD_NODELETE: the library's GEMMs (oneDNN, OpenBLAS) may start
  // libgomp's thread pool, whose threads outlive the call; unmapping libgomp
  // under them at dlclose crashed the process at exit (a 2-core Debian 12
  // machine, every run).
  void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  ForwardFn forward = lib ? (ForwardFn)dlsym(lib, "_mlir_ciface_forward") : 0;
  fprintf(stderr, "symbol: %s\n", forward ? "found" : dlerror());
  if (!forward)
    return;
  // T = 2, B = 1; W = I, R = 2 I, b = (0.5, -0.5), h0 = 0.
  float x[4] = {0.1f, 0.2f, -0.3f, 0.4f}, h0[2] = {0, 0};
  float W[4] = {1, 0, 0, 1}, R[4] = {2, 0, 0, 2}, b[2] = {0.5f, -0.5f};
  Memref3 mx = {x, x, 0, {2, 1, 2}, {2, 2, 1}};
  Memref2 mh0 = {h0, h0, 0, {1, 2}, {2, 1}};
  Memref2 mW = {W, W, 0, {2, 2}, {2, 1}}, mR = {R, R, 0, {2, 2}, {2, 1}};
  Memref1 mb = {b, b, 0, {2}, {1}};
  Results results;
  forward(&results, &mx, &mh0, &mW, &mR, &mb);
  double maxError = 0;
  double h[2] = {0, 0};
  for (int t = 0; t < 2; ++t)
    for (int k = 0; k < 2; ++k) {
      h[k] = tanh(x[2 * t + k] + 2 * h[k] + b[k]);
      float got = results.y.aligned[results.y.offset + 2 * t + k];
      maxError = fmax(maxError, fabs(got - h[k]));
    }
  fprintf(stderr, "y shape: %lld %lld %lld, max error < 1e-6: %d\n",
          (long long)results.y.sizes[0], (long long)results.y.sizes[1],
          (long long)results.y.sizes[2], maxError < 1e-6);
  free(results.y.allocated);
  free(results.hT.allocated);
  dlclose(lib);
  // CHECK-LABEL: @compile_and_run
  // CHECK-NEXT: compile: success
  // CHECK-NEXT: symbol: found
  // CHECK-NEXT: y shape: 2 1 2, max error < 1e-6: 1
}

static void testErrors(const char *dir) {
  fprintf(stderr, "@errors\n");
  char path[4096];
  snprintf(path, sizeof path, "%s/bad.so", dir);
  LstmCompileOptions options = lstmCompileOptionsDefault();
  options.target = mlirStringRefCreateFromCString("tpu");
  compile(path, options);
  options = lstmCompileOptionsDefault();
  options.target = mlirStringRefCreateFromCString("cpu");
  options.prePasses = mlirStringRefCreateFromCString("bogus");
  compile(path, options);
  options = lstmCompileOptionsDefault();
  options.target = mlirStringRefCreateFromCString("cpu");
  options.computeType = mlirStringRefCreateFromCString("fp16");
  compile(path, options);
  // Leaving out the per-step fallback means something beside persistent
  // kernels only.
  options = lstmCompileOptionsDefault();
  options.perStepFallback = false;
  compile(path, options);
  // The tensor cores' depth split reaches lstm-to-persistent, which names
  // the values it takes.
  options = lstmCompileOptionsDefault();
  options.persistent = true;
  options.persistentSplitDepth = 3;
  compile(path, options);
  // CHECK-LABEL: @errors
  // CHECK-NEXT: diagnostic: unknown target 'tpu' (expected cuda or cpu)
  // CHECK-NEXT: compile: failure
  // CHECK-NEXT: diagnostic: malformed --pre-passes pipeline 'bogus':
  // CHECK-SAME: 'bogus' does not refer to a registered pass
  // CHECK-NEXT: compile: failure
  // CHECK-NEXT: diagnostic: unknown compute type 'fp16'
  // CHECK-SAME: (expected fp32, tf32 or bf16)
  // CHECK-NEXT: compile: failure
  // CHECK-NEXT: diagnostic: leaving out the per-step fallback needs the
  // CHECK-SAME: persistent kernels
  // CHECK-NEXT: compile: failure
  // CHECK-NEXT: diagnostic: lstm-to-persistent: tensor-cores-split-depth must
  // CHECK-SAME: be -1 (chosen), 0 (to fit) or a power of two up to 32, got 3
  // CHECK: compile: failure
}

/// The defaults come from the C++ API's (lstm/Conversion/Utils/
/// GpuTargetOptions.h), spelt as the tools' options.
static void testDefaults(void) {
  fprintf(stderr, "@defaults\n");
  LstmCompileOptions options = lstmCompileOptionsDefault();
  fprintf(stderr, "%.*s %.*s %.*s %.*s\n", (int)options.target.length,
          options.target.data, (int)options.chip.length, options.chip.data,
          (int)options.features.length, options.features.data,
          (int)options.computeType.length, options.computeType.data);
  fprintf(stderr, "persistent %d, per-step fallback %d\n", options.persistent,
          options.perStepFallback);
  fprintf(stderr, "tensor cores %d, split depth %lld, 3xTF32 GEMMs %d\n",
          options.persistentTensorCores,
          (long long)options.persistentSplitDepth, options.splitTF32Gemms);
  fprintf(stderr, "verify each pass %d\n", options.verifyEachPass);
  // CHECK-LABEL: @defaults
  // CHECK-NEXT: cuda sm_90 +ptx81 fp32
  // CHECK-NEXT: persistent 0, per-step fallback 1
  // CHECK-NEXT: tensor cores 1, split depth -1, 3xTF32 GEMMs 1
  // CHECK-NEXT: verify each pass 0
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: lstm-capi-compiler-test SCRATCH-DIR\n");
    return 2;
  }
  lstmRegisterAllPasses();
  lstmRegisterTransformsPasses();
  testCompileAndRun(argv[1]);
  testErrors(argv[1]);
  testDefaults();
  return 0;
}
