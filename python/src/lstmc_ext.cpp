//===- lstmc_ext.cpp - The native part of the lstmc Python package --------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// lstmc._lstmc: parses, verifies, transforms and compiles lstm IR in-process
// through the project's C API (include/lstm-c) and upstream's (mlir-c). The
// IR crosses the boundary as text; every error (a parse or verifier error, a
// failing pass, a failed link) becomes lstmc._lstmc.CompilerError with the
// diagnostics, never a crash of the interpreter.
//
//===----------------------------------------------------------------------===//

#include "lstm-c/Compiler.h"
#include "lstm-c/Pipelines.h"
#include "lstm-c/Registration.h"
#include "mlir-c/Diagnostics.h"
#include "mlir-c/IR.h"

#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include <stdexcept>
#include <string>

namespace nb = nanobind;

namespace {

/// What C API failures turn into; Python sees lstmc._lstmc.CompilerError.
struct CompilerError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

void appendTo(MlirStringRef str, void *userData) {
  static_cast<std::string *>(userData)->append(str.data, str.length);
}

/// A context with the lstm dialects whose diagnostics are collected as
/// "LOCATION: error: MESSAGE" lines (notes indented under them).
class Context {
public:
  Context() {
    MlirDialectRegistry registry = mlirDialectRegistryCreate();
    lstmRegisterAllDialects(registry);
    ctx = mlirContextCreateWithRegistry(registry, /*threadingEnabled=*/false);
    mlirDialectRegistryDestroy(registry);
    mlirContextAttachDiagnosticHandler(ctx, &Context::handle, &diagnostics,
                                       nullptr);
  }
  ~Context() { mlirContextDestroy(ctx); }
  Context(const Context &) = delete;
  Context &operator=(const Context &) = delete;

  MlirModule parse(const std::string &ir) {
    MlirModule module =
        mlirModuleCreateParse(ctx, mlirStringRefCreate(ir.data(), ir.size()));
    if (mlirModuleIsNull(module))
      fail("the IR does not parse or verify");
    return module;
  }

  [[noreturn]] void fail(const std::string &what) {
    std::string message = what;
    if (!diagnostics.empty())
      message += ":\n" + diagnostics;
    diagnostics.clear();
    throw CompilerError(message);
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
  std::string diagnostics;
};

/// Owns a module for the length of a call.
struct ModuleRef {
  MlirModule module;
  ~ModuleRef() { mlirModuleDestroy(module); }
};

std::string print(MlirModule module) {
  std::string text;
  mlirOperationPrint(mlirModuleGetOperation(module), appendTo, &text);
  return text;
}

void verify(const std::string &ir) {
  Context context;
  ModuleRef ref{context.parse(ir)};
}

std::string transform(const std::string &ir, const std::string &pipeline) {
  Context context;
  ModuleRef ref{context.parse(ir)};
  if (!pipeline.empty() &&
      mlirLogicalResultIsFailure(lstmRunPipeline(
          ref.module, mlirStringRefCreate(pipeline.data(), pipeline.size()))))
    context.fail("pipeline '" + pipeline + "' failed");
  return print(ref.module);
}

MlirStringRef ref(const std::string &s) {
  return mlirStringRefCreate(s.data(), s.size());
}

void compile(const std::string &ir, const std::string &output,
             const std::string &target, const std::string &chip,
             const std::string &features, const std::string &cudaPath,
             const std::string &cudaLibDir, const std::string &runtimeLibDir,
             const std::string &prePasses, const std::string &computeType,
             bool gradients) {
  Context context;
  ModuleRef module{context.parse(ir)};
  LstmCompileOptions options = lstmCompileOptionsDefault();
  options.target = ref(target);
  options.chip = ref(chip);
  options.features = ref(features);
  options.cudaPath = ref(cudaPath);
  options.cudaLibDir = ref(cudaLibDir);
  options.runtimeLibDir = ref(runtimeLibDir);
  options.prePasses = ref(prePasses);
  options.computeType = ref(computeType);
  options.gradients = gradients;
  MlirLogicalResult result;
  {
    // Lowering, code generation and the link take seconds: let other Python
    // threads run.
    nb::gil_scoped_release release;
    result = lstmCompileToSharedLibrary(module.module, ref(output), &options);
  }
  if (mlirLogicalResultIsFailure(result))
    context.fail("compiling to " + output + " failed");
}

/// The C API's defaults of the options that have one (the compiler's, in
/// lstm/Conversion/Utils/GpuTargetOptions.h): lstmc documents and records
/// them from here rather than spelling them again.
nb::dict defaultOptions() {
  LstmCompileOptions options = lstmCompileOptionsDefault();
  auto str = [](MlirStringRef s) { return std::string(s.data, s.length); };
  nb::dict d;
  d["target"] = str(options.target);
  d["chip"] = str(options.chip);
  d["features"] = str(options.features);
  d["compute_type"] = str(options.computeType);
  return d;
}

} // namespace

NB_MODULE(_lstmc, m) {
  m.doc() = "The lstm compiler, in-process, through its C API.";
  nb::exception<CompilerError>(m, "CompilerError");
  lstmRegisterAllPasses();
  lstmRegisterTransformsPasses();
  m.def("verify", &verify, nb::arg("ir"),
        "Parses and verifies `ir`; raises CompilerError with the "
        "diagnostics if it does not.");
  m.def("transform", &transform, nb::arg("ir"), nb::arg("pipeline"),
        "Parses `ir`, runs the textual pass pipeline on builtin.module "
        "(e.g. 'canonicalize', 'lstm-combine-gate-gemms') and returns the "
        "printed module.");
  m.def("compile", &compile, nb::arg("ir"), nb::arg("output"),
        nb::arg("target") = "cpu", nb::arg("chip") = "",
        nb::arg("features") = "", nb::arg("cuda_path") = "",
        nb::arg("cuda_lib_dir") = "", nb::arg("runtime_lib_dir") = "",
        nb::arg("pre_passes") = "", nb::arg("compute_type") = "",
        nb::arg("gradients") = false,
        "Compiles `ir` to the shared library `output` (lstm-compile "
        "in-process); an empty option takes the compiler's default (see "
        "default_options). With `gradients`, the gradient functions of "
        "lstm-differentiate are exported too.");
  m.def("default_options", &defaultOptions,
        "The compiler's defaults: {'target', 'chip', 'features', "
        "'compute_type'}.");
}
