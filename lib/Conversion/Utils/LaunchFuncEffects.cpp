//===- LaunchFuncEffects.cpp - What gpu.launch_func reads and writes ------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "lstm/Conversion/Utils/LaunchFuncEffects.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;

namespace {

struct LaunchFuncMemoryEffects
    : public MemoryEffectOpInterface::ExternalModel<LaunchFuncMemoryEffects,
                                                    gpu::LaunchFuncOp> {
  void
  getEffects(Operation *op,
             SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
                 &effects) const {
    // Each buffer operand by name (the deallocation keeps it alive up to
    // the launch), then memory in general: a kernel may also be passed
    // addresses as integers (lstm-narrow-kernel-indices' operands).
    for (OpOperand &operand : op->getOpOperands()) {
      if (!isa<BaseMemRefType>(operand.get().getType()))
        continue;
      effects.emplace_back(MemoryEffects::Read::get(), &operand);
      effects.emplace_back(MemoryEffects::Write::get(), &operand);
    }
    effects.emplace_back(MemoryEffects::Read::get());
    effects.emplace_back(MemoryEffects::Write::get());
  }
};

} // namespace

void lstm::registerLaunchFuncMemoryEffectsExternalModel(
    DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, gpu::GPUDialect *) {
    gpu::LaunchFuncOp::attachInterface<LaunchFuncMemoryEffects>(*ctx);
  });
}
