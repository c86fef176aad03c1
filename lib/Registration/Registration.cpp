//===- Registration.cpp - Entry points to register the project ------------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception

#include "lstm/Registration.h"

#include "lstm/Conversion/Passes.h"
#include "lstm/Conversion/Utils/AllocTensorBounds.h"
#include "lstm/Conversion/Utils/LaunchFuncEffects.h"
#include "lstm/Dialect/LSTM/Differentiation/AdjointOpInterface.h"
#include "lstm/Dialect/LSTM/IR/LSTMDialect.h"
#include "lstm/Dialect/LSTM/Transforms/Passes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/BufferDeallocationOpInterfaceImpl.h"
#include "mlir/Dialect/Arith/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Bufferization/Transforms/FuncBufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/ControlFlow/Transforms/BufferDeallocationOpInterfaceImpl.h"
#include "mlir/Dialect/ControlFlow/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Linalg/Transforms/RuntimeOpVerification.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/Transforms/AllocationOpInterfaceImpl.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/BufferDeallocationOpInterfaceImpl.h"
#include "mlir/Dialect/SCF/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Tensor/Transforms/RuntimeOpVerification.h"
#include "mlir/IR/DialectRegistry.h"

using namespace mlir;

void lstm::registerLSTMDialect(DialectRegistry &registry) {
  registry.insert<LSTMDialect, arith::ArithDialect, func::FuncDialect,
                  linalg::LinalgDialect, math::MathDialect, scf::SCFDialect,
                  tensor::TensorDialect>();
}

void lstm::registerLSTMExtensions(DialectRegistry &registry) {
  // One-shot bufferization of what convert-lstm-to-linalg leaves (function
  // boundaries, the scf.for over time, slices, linalg ops, cf.assert), and
  // of the tensor constants and selects a cell may have.
  arith::registerBufferizableOpInterfaceExternalModels(registry);
  bufferization::func_ext::registerBufferizableOpInterfaceExternalModels(
      registry);
  cf::registerBufferizableOpInterfaceExternalModels(registry);
  linalg::registerBufferizableOpInterfaceExternalModels(registry);
  scf::registerBufferizableOpInterfaceExternalModels(registry);
  tensor::registerBufferizableOpInterfaceExternalModels(registry);
  // Ownership-based buffer deallocation across branches, selects and loops.
  arith::registerBufferDeallocationOpInterfaceExternalModels(registry);
  cf::registerBufferDeallocationOpInterfaceExternalModels(registry);
  memref::registerAllocationOpInterfaceExternalModels(registry);
  scf::registerBufferDeallocationOpInterfaceExternalModels(registry);
  // The derivatives of the ops lstm-differentiate takes.
  registerAdjointOpInterfaceExternalModels(registry);
  // The run-time checks of tensor and linalg ops that
  // lstm-generate-runtime-checks emits.
  linalg::registerRuntimeVerifiableOpInterfaceExternalModels(registry);
  tensor::registerRuntimeVerifiableOpInterfaceExternalModels(registry);
  // The extents of alloc_tensor to the value-bounds analysis
  // (lstm-write-part-stacks-in-place compares a stack's with its slices').
  registerAllocTensorValueBoundsExternalModel(registry);
  // The persistent kernels' launches, outlined before the buffers are
  // deallocated, say which buffers they use.
  registerLaunchFuncMemoryEffectsExternalModel(registry);
}

void lstm::registerLSTMPasses() {
  registerLSTMConversionPasses();
  registerLSTMTransformsPasses();
}

void lstm::registerAllLSTM(DialectRegistry &registry) {
  registerLSTMDialect(registry);
  registerLSTMExtensions(registry);
  registerLSTMPasses();
  registerLSTMPipelines();
}
