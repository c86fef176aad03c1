//===- NVGPUToNVVM.cpp - nvgpu to NVVM at the index width -----------------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Upstream's convert-nvgpu-to-nvvm (MLIR 22) makes its LLVMTypeConverter
// from default lowering options, not from the module's data layout: in a
// gpu.module whose index is 32 bits wide it converts the memref operands of
// the asynchronous copies to 64-bit descriptors, and convert-gpu-to-nvvm,
// which reads the data layout, leaves casts between descriptors of two
// widths that nothing can fold. This pass is the same conversion with the
// converter of the module's data layout; the patterns are upstream's.
//
//===----------------------------------------------------------------------===//

#include "lstm/Conversion/NVGPUToNVVM/NVGPUToNVVM.h"

#include "mlir/Conversion/LLVMCommon/ConversionTarget.h"
#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Conversion/NVGPUToNVVM/NVGPUToNVVM.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/Transforms/Patterns.h"
#include "mlir/Interfaces/DataLayoutInterfaces.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir::lstm {
#define GEN_PASS_DEF_CONVERTNVGPUTONVVMPASS
#include "lstm/Conversion/Passes.h.inc"
} // namespace mlir::lstm

using namespace mlir;

namespace {

struct ConvertNVGPUToNVVMPass
    : public lstm::impl::ConvertNVGPUToNVVMPassBase<ConvertNVGPUToNVVMPass> {
  using Base::Base;

  void runOnOperation() override {
    gpu::GPUModuleOp module = getOperation();
    MLIRContext *context = &getContext();
    LowerToLLVMOptions options(context, DataLayout(module));
    LLVMTypeConverter converter(context, options);
    // Shared memory (the staging buffers) to NVVM's address space 3.
    nvgpu::populateCommonGPUTypeAndAttributeConversions(converter);
    // A copy's token has no value in NVVM: an i32 the lowering drops.
    converter.addConversion([&](nvgpu::DeviceAsyncTokenType type) -> Type {
      return converter.convertType(IntegerType::get(type.getContext(), 32));
    });
    RewritePatternSet patterns(context);
    populateNVGPUToNVVMConversionPatterns(converter, patterns);
    LLVMConversionTarget target(*context);
    target.addLegalDialect<LLVM::LLVMDialect, NVVM::NVVMDialect,
                           arith::ArithDialect, memref::MemRefDialect>();
    // An nvgpu op left (one whose types have no conversion here) fails the
    // pass, naming the op, rather than reaching the NVVM lowering.
    target.addIllegalDialect<nvgpu::NVGPUDialect>();
    scf::populateSCFStructuralTypeConversionsAndLegality(converter, patterns,
                                                         target);
    if (failed(applyPartialConversion(module, target, std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
