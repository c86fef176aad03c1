//===- Signature.cpp - An entry function's arguments and results ---------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception

#include "lstm/Runner/JitRunner.h"

#include "lstm/Compiler/Compiler.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
using namespace mlir::lstm;

static llvm::Error makeError(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}

std::string TensorSpec::str() const {
  std::string s = "tensor<";
  for (int64_t d : shape)
    s +=
        (ShapedType::isDynamic(d) ? std::string("?") : std::to_string(d)) + "x";
  static const char *names[] = {"f32", "f64", "i32", "i64"};
  return s + names[static_cast<int>(dtype)] + ">";
}

static std::optional<TensorSpec> toSpec(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor)
    return std::nullopt;
  Type e = tensor.getElementType();
  TensorSpec spec;
  if (e.isF32())
    spec.dtype = DType::f32;
  else if (e.isF64())
    spec.dtype = DType::f64;
  else if (e.isSignlessInteger(32))
    spec.dtype = DType::i32;
  else if (e.isSignlessInteger(64))
    spec.dtype = DType::i64;
  else
    return std::nullopt;
  spec.shape.assign(tensor.getShape().begin(), tensor.getShape().end());
  return spec;
}

FailureOr<Signature> mlir::lstm::getSignature(ModuleOp module,
                                              StringRef entry) {
  auto func = module.lookupSymbol<func::FuncOp>(entry);
  if (failed(checkNotLowered(module)))
    return failure();
  if (!func || func.isExternal())
    return module.emitError("no function named '")
           << entry << "' with a body in this module";
  Signature sig;
  FunctionType type = func.getFunctionType();
  for (auto [i, t] : llvm::enumerate(type.getInputs())) {
    auto spec = toSpec(t);
    if (!spec)
      return func.emitError("argument #")
             << i << " has type " << t
             << "; the runner passes ranked tensors of f32, f64, i32 or i64";
    sig.args.push_back(*spec);
  }
  for (auto [i, t] : llvm::enumerate(type.getResults())) {
    auto spec = toSpec(t);
    if (!spec)
      return func.emitError("result #")
             << i << " has type " << t
             << "; the runner returns ranked tensors of f32, f64, i32 or i64";
    sig.results.push_back(*spec);
  }
  return sig;
}

llvm::Error mlir::lstm::checkInputs(const Signature &sig,
                                    llvm::ArrayRef<Array> inputs,
                                    llvm::ArrayRef<std::string> names) {
  if (inputs.size() != sig.args.size())
    return makeError("the entry function takes " +
                     llvm::Twine(sig.args.size()) + " arguments but " +
                     llvm::Twine(inputs.size()) + " inputs were given");
  for (size_t i = 0; i < inputs.size(); ++i) {
    const TensorSpec &spec = sig.args[i];
    const Array &a = inputs[i];
    std::string what = "argument #" + std::to_string(i) +
                       (i < names.size() ? " (" + names[i] + ")" : "");
    if (a.dtype != spec.dtype)
      return makeError(what + ": dtype " + dtypeName(a.dtype) +
                       " does not match the argument type " + spec.str() +
                       " (expected " + dtypeName(spec.dtype) + ")");
    if (a.shape.size() != spec.shape.size())
      return makeError(what + ": shape " + a.shapeString() + " has rank " +
                       llvm::Twine(a.shape.size()) + ", the argument type " +
                       spec.str() + " has rank " +
                       llvm::Twine(spec.shape.size()));
    for (size_t d = 0; d < a.shape.size(); ++d)
      if (!ShapedType::isDynamic(spec.shape[d]) && spec.shape[d] != a.shape[d])
        return makeError(what + ": shape " + a.shapeString() +
                         " does not match the argument type " + spec.str() +
                         " in dimension " + llvm::Twine(d));
  }
  return llvm::Error::success();
}
