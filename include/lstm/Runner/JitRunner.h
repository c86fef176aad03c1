//===- JitRunner.h - Compile a module for the CPU and call it ---*- C++ -*-===//
//
// Lowers a tensor-level module with the `lstm-to-cpu` pipeline, JIT-compiles
// it with mlir::ExecutionEngine and calls one of its functions on host arrays.
// Shared by `lstm-run` and the language bindings.
//
//===----------------------------------------------------------------------===//

#ifndef LSTM_RUNNER_JITRUNNER_H
#define LSTM_RUNNER_JITRUNNER_H

#include "lstm/Runner/Npy.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/Support/Error.h"

#include <memory>

namespace mlir {
class ExecutionEngine;

namespace lstm {

/// One argument or result of the entry function: element type and shape,
/// `ShapedType::kDynamic` where the extent is only known at call time.
struct TensorSpec {
  DType dtype;
  std::vector<int64_t> shape;
  /// Prints like an MLIR tensor type ("tensor<?x64xf32>").
  std::string str() const;
};

struct Signature {
  std::vector<TensorSpec> args;
  std::vector<TensorSpec> results;
};

/// The signature of function `entry` in `module`. Fails, with a diagnostic at
/// the function (or the module), when the function is missing or takes or
/// returns anything but ranked tensors of f32, f64, i32 or i64.
FailureOr<Signature> getSignature(ModuleOp module, StringRef entry);

/// Checks `inputs` against `sig` (count, dtype, rank, static extents); the
/// message names the offending argument.
llvm::Error checkInputs(const Signature &sig, llvm::ArrayRef<Array> inputs,
                        llvm::ArrayRef<std::string> names = {});

/// A module compiled for the host CPU.
class CompiledFunction {
public:
  /// Lowers `module` in place and JIT-compiles it. Diagnostics of a failing
  /// pass go to the context's handler.
  static llvm::Expected<std::unique_ptr<CompiledFunction>>
  compile(ModuleOp module, StringRef entry);
  ~CompiledFunction();

  const Signature &getSignature() const { return sig; }

  /// Calls the function. `inputs` must have passed checkInputs.
  llvm::Expected<std::vector<Array>> call(llvm::ArrayRef<Array> inputs);

private:
  CompiledFunction() = default;
  Signature sig;
  std::unique_ptr<ExecutionEngine> engine;
  void (*packed)(void **) = nullptr;
};

} // namespace lstm
} // namespace mlir

#endif // LSTM_RUNNER_JITRUNNER_H
