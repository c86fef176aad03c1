//===- LowerGridBarriers.cpp - lstm.grid_barrier to upstream ops ----------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// One thread per block arrives on a counter in global memory and waits for
// every block's arrival; the block barriers around it hold the other threads
// and order their writes before the arrival and their later reads after the
// wait. The arrival is a release and the polling loads are acquires, at
// device scope: PTX's release and acquire are cumulative, so the block's
// writes are visible to every block that has seen the count. The counter
// only grows: barrier k waits for k·G arrivals, so no barrier has to reset it
// for the next.
//
//===----------------------------------------------------------------------===//

#include "lstm/Conversion/LowerGridBarriers/LowerGridBarriers.h"

#include "lstm/Dialect/LSTM/IR/LSTMOps.h"
#include "mlir/Conversion/LLVMCommon/MemRefBuilder.h"
#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::lstm {
#define GEN_PASS_DEF_LOWERGRIDBARRIERSPASS
#include "lstm/Conversion/Passes.h.inc"
} // namespace mlir::lstm

using namespace mlir;
using namespace mlir::lstm;

/// The address of the counter's one element, as an LLVM pointer (memref
/// has no atomic load, nor orderings on its atomics). Taken from the
/// counter's LLVM descriptor, of the index width of the kernel's data
/// layout, not through `memref.extract_aligned_pointer_as_index`: in a
/// kernel whose index is 32 bits wide (lstm-narrow-kernel-indices) that
/// index would truncate the pointer. The NVVM lowering folds the cast with
/// its own of the same type.
static FailureOr<Value> counterAddress(OpBuilder &b, Location loc,
                                       Value counter) {
  auto type = cast<MemRefType>(counter.getType());
  MLIRContext *context = b.getContext();
  LowerToLLVMOptions options(
      context, DataLayout::closest(b.getInsertionBlock()->getParentOp()));
  LLVMTypeConverter converter(context, options);
  Type descriptorType = converter.convertType(type);
  if (!descriptorType)
    return failure();
  Value descriptor =
      UnrealizedConversionCastOp::create(b, loc, descriptorType, counter)
          .getResult(0);
  MemRefDescriptor fields(descriptor);
  return Value(LLVM::GEPOp::create(b, loc, LLVM::LLVMPointerType::get(context),
                                   b.getI32Type(), fields.alignedPtr(b, loc),
                                   ValueRange{fields.offset(b, loc)}));
}

/// NVPTX's synchronisation scope of the whole GPU (PTX's `.gpu`).
static constexpr llvm::StringLiteral kDeviceScope = "device";

static LogicalResult lowerGridBarrier(RewriterBase &rewriter,
                                      GridBarrierOp op) {
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  auto index = [&](OpBuilder &b, int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  auto i32 = [&](OpBuilder &b, int64_t v) -> Value {
    return arith::ConstantIntOp::create(b, loc, v, 32);
  };
  FailureOr<Value> word = counterAddress(rewriter, loc, op.getCounter());
  if (failed(word))
    return op.emitOpError("has a counter of type ")
           << op.getCounter().getType()
           << " that has no LLVM descriptor (a memory space not lowered?)";

  gpu::BarrierOp::create(rewriter, loc);
  Value isFirst;
  Value blocks;
  for (gpu::Dimension d :
       {gpu::Dimension::x, gpu::Dimension::y, gpu::Dimension::z}) {
    Value tid = gpu::ThreadIdOp::create(rewriter, loc, d);
    Value zero = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::eq,
                                       tid, index(rewriter, 0));
    isFirst =
        isFirst ? arith::AndIOp::create(rewriter, loc, isFirst, zero) : zero;
    Value dim = gpu::GridDimOp::create(rewriter, loc, d);
    blocks = blocks ? arith::MulIOp::create(rewriter, loc, blocks, dim) : dim;
  }
  // The producer of the op guarantees ordinal · G < 2^31.
  Value target = arith::IndexCastOp::create(
      rewriter, loc, rewriter.getI32Type(),
      arith::MulIOp::create(rewriter, loc, op.getOrdinal(), blocks));
  scf::IfOp::create(rewriter, loc, isFirst, [&](OpBuilder &b, Location l) {
    // The arrival releases, at device scope, the block's writes (ordered
    // before it by the block barrier): a release fence and a relaxed atomic
    // add (NVPTX drops the ordering of an atomicrmw: no red.release); the
    // polling loads acquire the other blocks' writes (ld.acquire.gpu).
    // Cheaper than sequentially consistent fences around volatile polling
    // (bench/micro/grid_barrier.cu).
    LLVM::FenceOp::create(b, l, LLVM::AtomicOrdering::release, kDeviceScope);
    LLVM::AtomicRMWOp::create(b, l, LLVM::AtomicBinOp::add, *word, i32(b, 1),
                              LLVM::AtomicOrdering::monotonic, kDeviceScope,
                              /*alignment=*/4);
    scf::WhileOp::create(
        b, l, TypeRange(), ValueRange(),
        [&](OpBuilder &wb, Location wl, ValueRange) {
          Value arrived = LLVM::LoadOp::create(
              wb, wl, wb.getI32Type(), *word, /*alignment=*/4,
              /*isVolatile=*/false, /*isNonTemporal=*/false,
              /*isInvariant=*/false, /*isInvariantGroup=*/false,
              LLVM::AtomicOrdering::acquire, kDeviceScope);
          Value waiting = arith::CmpIOp::create(
              wb, wl, arith::CmpIPredicate::slt, arrived, target);
          scf::ConditionOp::create(wb, wl, waiting, ValueRange());
        },
        [&](OpBuilder &wb, Location wl, ValueRange) {
          scf::YieldOp::create(wb, wl);
        });
    scf::YieldOp::create(b, l);
  });
  gpu::BarrierOp::create(rewriter, loc);
  rewriter.eraseOp(op);
  return success();
}

/// `nvvm.mma.sync` of the op's fragments, its result struct unpacked.
static void lowerWarpMma(RewriterBase &rewriter, WarpMmaOp op) {
  rewriter.setInsertionPoint(op);
  Location loc = op.getLoc();
  Type f32 = rewriter.getF32Type();
  auto result = LLVM::LLVMStructType::getLiteral(rewriter.getContext(),
                                                 {f32, f32, f32, f32});
  NVVM::MMATypes type =
      op.getBf16() ? NVVM::MMATypes::bf16 : NVVM::MMATypes::tf32;
  Value sum = NVVM::MmaOp::create(
      rewriter, loc, result, op.getA(), op.getB(), op.getC(),
      {16, 8, op.getBf16() ? 16 : 8}, /*b1Op=*/std::nullopt,
      /*intOverflow=*/std::nullopt, std::array<NVVM::MMATypes, 2>{type, type},
      std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                     NVVM::MMALayout::col});
  SmallVector<Value> elements;
  for (int64_t i = 0; i < 4; ++i)
    elements.push_back(LLVM::ExtractValueOp::create(rewriter, loc, sum, i));
  rewriter.replaceOp(op, elements);
}

namespace {
struct LowerGridBarriersPass
    : lstm::impl::LowerGridBarriersPassBase<LowerGridBarriersPass> {
  void runOnOperation() override {
    SmallVector<GridBarrierOp> gridBarriers;
    SmallVector<BlockBarrierOp> blockBarriers;
    SmallVector<Operation *> warpOps;
    getOperation()->walk([&](Operation *op) {
      if (auto grid = dyn_cast<GridBarrierOp>(op))
        gridBarriers.push_back(grid);
      else if (auto block = dyn_cast<BlockBarrierOp>(op))
        blockBarriers.push_back(block);
      else if (isa<WarpBarrierOp, WarpsBarrierOp, WarpMmaOp>(op))
        warpOps.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (Operation *op : warpOps) {
      if (auto mma = dyn_cast<WarpMmaOp>(op)) {
        lowerWarpMma(rewriter, mma);
        continue;
      }
      rewriter.setInsertionPoint(op);
      if (auto warps = dyn_cast<WarpsBarrierOp>(op)) {
        Value threads = arith::ConstantIntOp::create(rewriter, op->getLoc(),
                                                     warps.getWarps() * 32, 32);
        rewriter.replaceOpWithNewOp<NVVM::BarrierOp>(
            op, /*res=*/Type(), warps.getId(), threads,
            /*reductionOp=*/nullptr, /*reductionPredicate=*/Value());
        continue;
      }
      Value everyLane =
          arith::ConstantIntOp::create(rewriter, op->getLoc(), -1, 32);
      rewriter.replaceOpWithNewOp<NVVM::SyncWarpOp>(op, everyLane);
    }
    for (GridBarrierOp op : gridBarriers)
      if (failed(lowerGridBarrier(rewriter, op)))
        return signalPassFailure();
    for (BlockBarrierOp op : blockBarriers) {
      rewriter.setInsertionPoint(op);
      if (op.getWaitAsyncCopies()) {
        // The thread's copies so far as one group, and a wait for every
        // group.
        Value group = nvgpu::DeviceAsyncCreateGroupOp::create(
            rewriter, op.getLoc(),
            nvgpu::DeviceAsyncTokenType::get(rewriter.getContext()),
            ValueRange());
        nvgpu::DeviceAsyncWaitOp::create(rewriter, op.getLoc(), group,
                                         rewriter.getI32IntegerAttr(0));
      }
      rewriter.replaceOpWithNewOp<gpu::BarrierOp>(op);
    }
  }
};
} // namespace
