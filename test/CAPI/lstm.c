//===- lstm.c - The C API of the lstm compiler ----------------------------===//
//
// Parses lstm IR through the upstream C API, lowers it with lstm-to-cpu and
// checks that only the LLVM dialect is left; a bad pipeline name and invalid
// IR must fail with a diagnostic, not crash. Built as lstm-capi-test.
//
//===----------------------------------------------------------------------===//

// RUN: lstm-capi-test 2>&1 | FileCheck %s

#include "lstm-c/Dialects.h"
#include "lstm-c/Pipelines.h"
#include "lstm-c/Registration.h"
#include "mlir-c/Diagnostics.h"
#include "mlir-c/IR.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

// A one-layer minimal gated unit (examples/mgu.mlir, smaller): lstm ops with
// arith around them.
static const char *kMGU =
    "func.func @forward(%x: tensor<?x?x4xf32>, %h0: tensor<?x8xf32>,\n"
    "    %Wf: tensor<8x4xf32>, %Rf: tensor<8x8xf32>, %bf: tensor<8xf32>,\n"
    "    %Wn: tensor<8x4xf32>, %Rn: tensor<8x8xf32>, %bn: tensor<8xf32>)\n"
    "    -> (tensor<?x?x8xf32>, tensor<?x8xf32>) {\n"
    "  %y, %hT = lstm.layer forward ins(%x : tensor<?x?x4xf32>)\n"
    "      init(%h0 : tensor<?x8xf32>)\n"
    "      -> (tensor<?x?x8xf32>), (tensor<?x8xf32>) {\n"
    "  ^bb0(%xt: tensor<?x4xf32>, %h: tensor<?x8xf32>):\n"
    "    %f = lstm.gate sigmoid (%xt, %h : tensor<?x4xf32>, tensor<?x8xf32>)\n"
    "        weights(%Wf, %Rf : tensor<8x4xf32>, tensor<8x8xf32>)\n"
    "        bias(%bf : tensor<8xf32>) -> tensor<?x8xf32>\n"
    "    %fh = arith.mulf %f, %h : tensor<?x8xf32>\n"
    "    %n = lstm.gate tanh (%xt, %fh : tensor<?x4xf32>, tensor<?x8xf32>)\n"
    "        weights(%Wn, %Rn : tensor<8x4xf32>, tensor<8x8xf32>)\n"
    "        bias(%bn : tensor<8xf32>) -> tensor<?x8xf32>\n"
    "    %fc = lstm.one_minus %f : tensor<?x8xf32>\n"
    "    %a = arith.mulf %fc, %h : tensor<?x8xf32>\n"
    "    %b = arith.mulf %f, %n : tensor<?x8xf32>\n"
    "    %hn = arith.addf %a, %b : tensor<?x8xf32>\n"
    "    lstm.yield out(%hn : tensor<?x8xf32>) state(%hn : tensor<?x8xf32>)\n"
    "  }\n"
    "  return %y, %hT : tensor<?x?x8xf32>, tensor<?x8xf32>\n"
    "}\n";

// Parses, but the lstm verifier rejects it: the state's batch is not B.
static const char *kBadBatch =
    "func.func @f(%x: tensor<5x2x4xf32>, %h0: tensor<3x8xf32>) {\n"
    "  %hT = lstm.layer forward ins(%x : tensor<5x2x4xf32>)\n"
    "      init(%h0 : tensor<3x8xf32>) -> (), (tensor<3x8xf32>) {\n"
    "  ^bb0(%xt: tensor<2x4xf32>, %h: tensor<3x8xf32>):\n"
    "    lstm.yield state(%h : tensor<3x8xf32>)\n"
    "  }\n"
    "  return\n"
    "}\n";

static void printToStderr(MlirStringRef str, void *userData) {
  (void)userData;
  fwrite(str.data, 1, str.length, stderr);
}

// Diagnostics come here, not to the default printer, so that the test sees
// that they were reported on the context.
static MlirLogicalResult printDiagnostic(MlirDiagnostic diagnostic,
                                         void *userData) {
  (void)userData;
  fprintf(stderr, "diagnostic: %s: ",
          mlirDiagnosticGetSeverity(diagnostic) == MlirDiagnosticError
              ? "error"
              : "other");
  mlirDiagnosticPrint(diagnostic, printToStderr, NULL);
  fprintf(stderr, "\n");
  return mlirLogicalResultSuccess();
}

static bool startsWith(MlirStringRef str, const char *prefix) {
  size_t length = strlen(prefix);
  return str.length >= length && strncmp(str.data, prefix, length) == 0;
}

// Counts the operations outside the llvm dialect (the module aside).
static MlirWalkResult countNonLLVM(MlirOperation op, void *userData) {
  MlirStringRef name = mlirIdentifierStr(mlirOperationGetName(op));
  if (!startsWith(name, "llvm.") && !startsWith(name, "builtin.module"))
    ++*(int *)userData;
  return MlirWalkResultAdvance;
}

static MlirContext createContext(void) {
  MlirDialectRegistry registry = mlirDialectRegistryCreate();
  lstmRegisterAllDialects(registry);
  MlirContext ctx = mlirContextCreateWithRegistry(registry, false);
  mlirDialectRegistryDestroy(registry);
  mlirContextAttachDiagnosticHandler(ctx, printDiagnostic, NULL, NULL);
  return ctx;
}

static MlirModule parse(MlirContext ctx, const char *ir) {
  return mlirModuleCreateParse(ctx, mlirStringRefCreateFromCString(ir));
}

static void testDialectHandle(void) {
  fprintf(stderr, "@dialect_handle\n");
  MlirContext ctx = mlirContextCreate();
  MlirDialectHandle handle = mlirGetDialectHandle__lstm__();
  mlirDialectHandleRegisterDialect(handle, ctx);
  MlirDialect dialect = mlirDialectHandleLoadDialect(handle, ctx);
  MlirStringRef ns = mlirDialectGetNamespace(dialect);
  fprintf(stderr, "loaded: %.*s\n", (int)ns.length, ns.data);
  mlirContextDestroy(ctx);
  // CHECK-LABEL: @dialect_handle
  // CHECK: loaded: lstm
}

static void testLowerToLLVM(void) {
  fprintf(stderr, "@lower_to_llvm\n");
  MlirContext ctx = createContext();
  MlirModule module = parse(ctx, kMGU);
  fprintf(stderr, "parsed: %d\n", !mlirModuleIsNull(module));
  if (mlirModuleIsNull(module)) {
    mlirContextDestroy(ctx);
    return;
  }
  MlirLogicalResult result =
      lstmRunPipeline(module, mlirStringRefCreateFromCString("lstm-to-cpu"));
  fprintf(stderr, "lstm-to-cpu: %s\n",
          mlirLogicalResultIsSuccess(result) ? "success" : "failure");
  int nonLLVM = 0;
  mlirOperationWalk(mlirModuleGetOperation(module), countNonLLVM, &nonLLVM,
                    MlirWalkPreOrder);
  fprintf(stderr, "ops outside the llvm dialect: %d\n", nonLLVM);
  MlirOperation first = mlirBlockGetFirstOperation(mlirModuleGetBody(module));
  MlirStringRef name = mlirIdentifierStr(mlirOperationGetName(first));
  fprintf(stderr, "first op: %.*s\n", (int)name.length, name.data);
  mlirModuleDestroy(module);
  mlirContextDestroy(ctx);
  // CHECK-LABEL: @lower_to_llvm
  // CHECK-NEXT: parsed: 1
  // CHECK-NEXT: lstm-to-cpu: success
  // CHECK-NEXT: ops outside the llvm dialect: 0
  // CHECK-NEXT: first op: llvm.
}

static void testBadPipeline(void) {
  fprintf(stderr, "@bad_pipeline\n");
  MlirContext ctx = createContext();
  MlirModule module = parse(ctx, kMGU);
  if (mlirModuleIsNull(module)) {
    mlirContextDestroy(ctx);
    return;
  }
  MlirLogicalResult result = lstmRunPipeline(
      module, mlirStringRefCreateFromCString("lstm-to-nowhere"));
  fprintf(stderr, "lstm-to-nowhere: %s\n",
          mlirLogicalResultIsFailure(result) ? "failure" : "success");
  mlirModuleDestroy(module);
  mlirContextDestroy(ctx);
  // CHECK-LABEL: @bad_pipeline
  // CHECK-NEXT: diagnostic: error: invalid pass pipeline 'lstm-to-nowhere':
  // CHECK-SAME: 'lstm-to-nowhere' does not refer to a registered pass
  // CHECK-NEXT: lstm-to-nowhere: failure
}

static void testInvalidIR(void) {
  fprintf(stderr, "@invalid_ir\n");
  MlirContext ctx = createContext();
  MlirModule module = parse(ctx, "func.func @f( {");
  fprintf(stderr, "syntax error: %s\n",
          mlirModuleIsNull(module) ? "null module" : "parsed");
  module = parse(ctx, kBadBatch);
  fprintf(stderr, "verifier error: %s\n",
          mlirModuleIsNull(module) ? "null module" : "parsed");
  mlirContextDestroy(ctx);
  // CHECK-LABEL: @invalid_ir
  // CHECK-NEXT: diagnostic: error: expected non-function type
  // CHECK-NEXT: syntax error: null module
  // CHECK-NEXT: diagnostic: error: 'lstm.layer' op initial state #0
  // CHECK-SAME: must have the batch size (2)
  // CHECK-NEXT: verifier error: null module
}

int main(void) {
  lstmRegisterAllPasses();
  // A second call must be harmless.
  lstmRegisterAllPasses();
  testDialectHandle();
  testLowerToLLVM();
  testBadPipeline();
  testInvalidIR();
  return 0;
}
