//===- Text.cpp - The compiler on IR text, for foreign callers ------------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// lstm-c/Text.h on top of the rest of the C API (lstm-c and upstream's
// mlir-c, as any C caller would use them): the functions that Python's
// lstmc calls through ctypes. Errors never escape as C++ exceptions: they
// become the return code and the diagnostics text.
//
//===----------------------------------------------------------------------===//

#include "lstm-c/Text.h"
#include "lstm-c/Compiler.h"
#include "lstm-c/Pipelines.h"
#include "lstm-c/Registration.h"
#include "mlir-c/Diagnostics.h"
#include "mlir-c/IR.h"

#include <cstdlib>
#include <cstring>
#include <string>

namespace {

void appendTo(MlirStringRef str, void *userData) {
  static_cast<std::string *>(userData)->append(str.data, str.length);
}

char *copy(const std::string &s) {
  char *out = static_cast<char *>(std::malloc(s.size() + 1));
  if (out)
    std::memcpy(out, s.c_str(), s.size() + 1);
  return out;
}

MlirStringRef ref(const char *s) {
  return mlirStringRefCreate(s ? s : "", s ? std::strlen(s) : 0);
}

void registerPassesOnce() {
  static const bool registered = [] {
    lstmRegisterAllPasses();
    lstmRegisterTransformsPasses();
    return true;
  }();
  (void)registered;
}

/// A context with the lstm dialects whose diagnostics are collected as
/// "LOCATION: error: MESSAGE" lines (notes indented under them).
class Context {
public:
  Context() {
    registerPassesOnce();
    MlirDialectRegistry registry = mlirDialectRegistryCreate();
    lstmRegisterAllDialects(registry);
    ctx = mlirContextCreateWithRegistry(registry, /*threadingEnabled=*/false);
    mlirDialectRegistryDestroy(registry);
    mlirContextAttachDiagnosticHandler(ctx, &Context::handle, &diagnostics,
                                       nullptr);
  }
  ~Context() {
    if (!mlirModuleIsNull(module))
      mlirModuleDestroy(module);
    mlirContextDestroy(ctx);
  }
  Context(const Context &) = delete;
  Context &operator=(const Context &) = delete;

  /// Parses `ir` into module(); false (with the error set) if it does not.
  bool parse(const char *ir, size_t size, char **error) {
    module = mlirModuleCreateParse(ctx, mlirStringRefCreate(ir, size));
    if (mlirModuleIsNull(module))
      return fail("the IR does not parse or verify", error);
    return true;
  }

  MlirModule getModule() const { return module; }

  /// Sets *error to `what` and the diagnostics so far; returns false.
  bool fail(const std::string &what, char **error) {
    std::string message = what;
    if (!diagnostics.empty())
      message += ":\n" + diagnostics;
    diagnostics.clear();
    if (error)
      *error = copy(message);
    return false;
  }

private:
  static void print(MlirDiagnostic diagnostic, std::string &out,
                    const char *indent) {
    out += indent;
    mlirLocationPrint(mlirDiagnosticGetLocation(diagnostic), appendTo, &out);
    switch (mlirDiagnosticGetSeverity(diagnostic)) {
    case MlirDiagnosticError:
      out += ": error: ";
      break;
    case MlirDiagnosticWarning:
      out += ": warning: ";
      break;
    default:
      out += ": note: ";
      break;
    }
    mlirDiagnosticPrint(diagnostic, appendTo, &out);
    out += "\n";
    for (intptr_t i = 0, e = mlirDiagnosticGetNumNotes(diagnostic); i < e; ++i)
      print(mlirDiagnosticGetNote(diagnostic, i), out, "  ");
  }

  static MlirLogicalResult handle(MlirDiagnostic diagnostic, void *userData) {
    print(diagnostic, *static_cast<std::string *>(userData), "");
    return mlirLogicalResultSuccess();
  }

  MlirContext ctx;
  MlirModule module = {nullptr};
  std::string diagnostics;
};

/// A JSON string literal of `s` (the defaults are plain ASCII; quotes and
/// backslashes escaped all the same).
std::string quote(MlirStringRef s) {
  std::string out = "\"";
  for (size_t i = 0; i < s.length; ++i) {
    if (s.data[i] == '"' || s.data[i] == '\\')
      out += '\\';
    out += s.data[i];
  }
  return out + "\"";
}

} // namespace

int lstmTextVerify(const char *ir, size_t size, char **error) {
  Context context;
  return context.parse(ir, size, error) ? 0 : 1;
}

int lstmTextTransform(const char *ir, size_t size, const char *pipeline,
                      char **output, char **error) {
  Context context;
  if (!context.parse(ir, size, error))
    return 1;
  if (pipeline && *pipeline &&
      mlirLogicalResultIsFailure(
          lstmRunPipeline(context.getModule(), ref(pipeline)))) {
    context.fail("pipeline '" + std::string(pipeline) + "' failed", error);
    return 1;
  }
  std::string text;
  mlirOperationPrint(mlirModuleGetOperation(context.getModule()), appendTo,
                     &text);
  if (output)
    *output = copy(text);
  return 0;
}

int lstmTextCompile(const char *ir, size_t size, const char *output,
                    const LstmTextCompileOptions *given, char **error) {
  Context context;
  if (!context.parse(ir, size, error))
    return 1;
  LstmCompileOptions options = lstmCompileOptionsDefault();
  if (given) {
    // An empty string keeps the default: the C API's own convention.
    options.target = ref(given->target);
    options.chip = ref(given->chip);
    options.features = ref(given->features);
    options.cudaPath = ref(given->cudaPath);
    options.cudaLibDir = ref(given->cudaLibDir);
    options.runtimeLibDir = ref(given->runtimeLibDir);
    options.prePasses = ref(given->prePasses);
    options.computeType = ref(given->computeType);
    options.gradients = given->gradients != 0;
    options.gradFunction = given->gradients != 2;
    options.forwardThroughTrain = given->gradients == 2;
    options.persistent = given->persistent != 0;
    options.chunkBytes = given->chunkBytes > 0 ? given->chunkBytes : 0;
    if (given->hoistMinThreads != 0)
      options.hoistMinThreads = given->hoistMinThreads;
    if (given->wholeBatch != 0)
      options.splitBatch = false;
    if (given->noPerStepFallback != 0)
      options.perStepFallback = false;
    if (given->noPersistentTensorCores != 0)
      options.persistentTensorCores = false;
    if (given->setPersistentSplitDepth != 0)
      options.persistentSplitDepth = given->persistentSplitDepth;
    if (given->noSplitTF32Gemms != 0)
      options.splitTF32Gemms = false;
  }
  if (mlirLogicalResultIsFailure(lstmCompileToSharedLibrary(
          context.getModule(), ref(output), &options))) {
    context.fail(
        "compiling to " + std::string(output ? output : "") + " failed", error);
    return 1;
  }
  return 0;
}

char *lstmTextDefaultOptions(void) {
  LstmCompileOptions options = lstmCompileOptionsDefault();
  return copy("{\"target\": " + quote(options.target) +
              ", \"chip\": " + quote(options.chip) +
              ", \"features\": " + quote(options.features) +
              ", \"compute_type\": " + quote(options.computeType) + "}");
}

void lstmTextFree(char *str) { std::free(str); }
