//===- PersistentKernelBuilder.cpp - A persistent kernel's host side ------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// A persistent kernel's host side (its layout: PersistentLayout.cpp): the
// layer becomes, before it (tensor level, ahead of bufferization),
// `bufferization.to_buffer` views of what the kernel reads, `memref.alloc`s
// of what it writes (the outputs, the finals, two buffers per state used
// alternately, the barrier's counter), the `gpu.launch`, and
// `bufferization.to_tensor` of the results.
//
//===----------------------------------------------------------------------===//

#include "PersistentKernelBuilder.h"

#include "lstm/Dialect/LSTM/Utils/RuntimeChecks.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::lstm;
using namespace mlir::lstm::persistent;

func::FuncOp
mlir::lstm::persistent::declareRuntimeFunction(RewriterBase &rewriter,
                                               ModuleOp module, StringRef name,
                                               FunctionType type) {
  if (auto existing = module.lookupSymbol<func::FuncOp>(name))
    return existing;
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPointToStart(module.getBody());
  auto function = func::FuncOp::create(rewriter, module.getLoc(), name, type);
  function.setPrivate();
  return function;
}

/// A memref of `shape` with a fully dynamic strided layout: what any tensor
/// bufferizes to can be cast to it, so `to_buffer` never copies.
MemRefType mlir::lstm::persistent::stridedMemRef(ArrayRef<int64_t> shape,
                                                 Type elementType) {
  MLIRContext *ctx = elementType.getContext();
  SmallVector<int64_t> strides(shape.size(), ShapedType::kDynamic);
  return MemRefType::get(
      shape, elementType,
      StridedLayoutAttr::get(ctx, ShapedType::kDynamic, strides));
}

Value PersistentKernelBuilder::readOnlyBuffer(Value tensor) {
  auto type = cast<RankedTensorType>(tensor.getType());
  return bufferization::ToBufferOp::create(
      rewriter, loc, stridedMemRef(type.getShape(), type.getElementType()),
      tensor, /*read_only=*/true);
}

/// A buffer of `type`'s shape whose dynamic extents are, in order, those of
/// `leadingExtents` aligned with the leading dimensions.
Value PersistentKernelBuilder::allocLike(RankedTensorType type,
                                         ArrayRef<Value> leadingExtents) {
  SmallVector<Value> dynamic;
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (type.isDynamicDim(d))
      dynamic.push_back(leadingExtents[d]);
  return memref::AllocOp::create(
      rewriter, loc, MemRefType::get(type.getShape(), type.getElementType()),
      dynamic);
}

/// Asserts that `extent` (of `value`'s dimension `dim`) is `expected`.
static void assertExtent(OpBuilder &b, Location loc, Value value, int64_t dim,
                         Value expected, const Twine &what) {
  Value extent = tensor::DimOp::create(b, loc, value, dim);
  Value same =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, extent, expected);
  cf::AssertOp::create(b, loc, same,
                       (what + " (at " + describeLocation(loc) + ")").str());
}

/// The extents the kernel indexes with must agree (as the per-step lowering
/// checks them). In a stack's kernel, against the stack's: the sequences
/// it projects in the step are another layer's outputs, of those extents.
void PersistentKernelBuilder::assertExtents() {
  if (!seqLen) {
    assertLayerExtents(rewriter, layer);
    Value seq0 = layer.getInputs().front();
    for (const PointwiseStep &step : plan.pointwise)
      for (const OperandSource &source : step.operands)
        if (source.kind == OperandSource::Kind::Above &&
            cast<RankedTensorType>(source.above.getType()).getRank() == 2)
          assertSameExtent(rewriter, loc, source.above, 0, seq0, 1,
                           "lstm.layer: a value of the cell has a different "
                           "batch size than the input");
    seqLen = tensor::DimOp::create(rewriter, loc, seq0, 0);
    batch = tensor::DimOp::create(rewriter, loc, seq0, 1);
    return;
  }
  for (auto [i, seq] : llvm::enumerate(layer.getInputs())) {
    if (stackInputs.count(i))
      continue;
    assertExtent(rewriter, loc, seq, 0, seqLen,
                 "lstm.layer: input #" + Twine(i) +
                     " has a different sequence length than the layer's "
                     "input from the layer before");
    assertExtent(rewriter, loc, seq, 1, batch,
                 "lstm.layer: input #" + Twine(i) +
                     " has a different batch size than the layer's input "
                     "from the layer before");
  }
  for (auto [i, init] : llvm::enumerate(layer.getInits()))
    assertExtent(rewriter, loc, init, 0, batch,
                 "lstm.layer: initial state #" + Twine(i) +
                     " has a different batch size than the input");
  if (Value rowLengths = layer.getLengths())
    assertExtent(rewriter, loc, rowLengths, 0, batch,
                 "lstm.layer: lengths has a different size than the batch");
  for (const PointwiseStep &step : plan.pointwise)
    for (const OperandSource &source : step.operands)
      if (source.kind == OperandSource::Kind::Above &&
          cast<RankedTensorType>(source.above.getType()).getRank() == 2)
        assertExtent(rewriter, loc, source.above, 0, batch,
                     "lstm.layer: a value of the cell has a different batch "
                     "size than the input");
}

void PersistentKernelBuilder::prepareBuffers() {
  assertExtents();
  for (auto [i, seq] : llvm::enumerate(layer.getInputs()))
    inputs.push_back(stackInputs.count(i) ? stackInputs.lookup(i)
                                          : readOnlyBuffer(seq));
  for (Value init : layer.getInits())
    inits.push_back(readOnlyBuffer(init));
  if (Value rowLengths = layer.getLengths())
    lengths = readOnlyBuffer(rowLengths);
  for (const PointwiseStep &step : plan.pointwise)
    for (const OperandSource &source : step.operands)
      if (source.kind == OperandSource::Kind::Above &&
          !aboveBuffers.count(source.above))
        aboveBuffers[source.above] = readOnlyBuffer(source.above);

  DenseMap<Value, Value> weightBuffers;
  for (const Product &product : plan.products) {
    SmallVector<Value> &terms = weights.emplace_back();
    for (auto &[input, weight] : product.terms) {
      Value &buffer = weightBuffers[weight];
      if (!buffer)
        buffer = readOnlyBuffer(weight);
      terms.push_back(buffer);
    }
  }

  Type f32 = rewriter.getF32Type();
  for (int64_t width : plan.stateWidths)
    stateBuffers.push_back(memref::AllocOp::create(
        rewriter, loc, MemRefType::get({2, ShapedType::kDynamic, width}, f32),
        ValueRange{batch}));
  for (Value out : layer.getOutputs())
    outputs.push_back(
        allocLike(cast<RankedTensorType>(out.getType()), {seqLen, batch}));
  for (Value final : layer.getFinals())
    finals.push_back(
        allocLike(cast<RankedTensorType>(final.getType()), {batch}));
  // Two per value, used by alternate steps (as the states): a block that
  // starts the next step while another still stages this one's values
  // writes the other buffer.
  for (const Computed &value : scratchValues)
    scratch.push_back(memref::AllocOp::create(
        rewriter, loc,
        MemRefType::get(
            {2, ShapedType::kDynamic, plan.pointwise[value.op].width}, f32),
        ValueRange{batch}));
  for (size_t i = 0; i < carriedColumns.size(); ++i)
    carried.push_back(memref::AllocOp::create(
        rewriter, loc,
        MemRefType::get({2, ShapedType::kDynamic, plan.width}, f32),
        ValueRange{batch}));
}

Value PersistentKernelBuilder::allocateCounter(Value iterations,
                                               int64_t gridBlocks,
                                               int64_t barriersPerIteration) {
  // The barrier's counter counts arrivals: barrier k waits for k·G, which
  // must fit its 32 bits (the barriers are 1 + T · the step's). Zeroed by
  // a memset: a one-element linalg.fill would become a store on the host.
  int64_t maxSteps =
      ((int64_t{1} << 31) / gridBlocks - 2) / barriersPerIteration;
  Value fits = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::ule,
                                     iterations, index(rewriter, maxSteps));
  cf::AssertOp::create(
      rewriter, loc, fits,
      "lstm.layer: the sequence is too long for a persistent kernel of " +
          std::to_string(gridBlocks) + " blocks (at most " +
          std::to_string(maxSteps) + " steps) (at " + describeLocation(loc) +
          ")");
  Value buffer = memref::AllocOp::create(
      rewriter, loc, MemRefType::get({1}, rewriter.getI32Type()));
  Value zero = arith::ConstantIntOp::create(rewriter, loc, 0, 32);
  gpu::MemsetOp::create(rewriter, loc, /*asyncToken=*/Type(), ValueRange(),
                        buffer, zero);
  return buffer;
}

void PersistentKernelBuilder::build(StringRef kernelName) {
  rewriter.setInsertionPoint(layer);
  prepareBuffers();
  counter = allocateCounter(seqLen, numBlocks, gridBarriersPerStep());
  Value one = index(rewriter, 1);
  // One shared buffer per staged value, chunkRows rows of the widest,
  // carved out of the kernel's dynamic shared memory (workgroup
  // attributions of the launch would be block arguments, which the
  // ownership-based buffer deallocation of the host code does not accept).
  // Each only as long as the batch needs: what a block does not take is L1
  // cache, and a small batch needs no opting in.
  Value sharedBytes;
  if (maxStaged != 0)
    sharedBytes = arith::IndexCastOp::create(
        rewriter, loc, rewriter.getI32Type(), sharedBytesAt(rewriter, batch));
  auto launch = gpu::LaunchOp::create(
      rewriter, loc, index(rewriter, numBlocks), one, one,
      index(rewriter, blockSize), one, one, sharedBytes,
      /*asyncTokenType=*/nullptr, /*asyncDependencies=*/{},
      /*workgroupAttributions=*/{}, /*privateAttributions=*/{},
      /*clusterSizeX=*/nullptr, /*clusterSizeY=*/nullptr,
      /*clusterSizeZ=*/nullptr,
      FlatSymbolRefAttr::get(rewriter.getContext(), kernelName),
      FlatSymbolRefAttr::get(rewriter.getContext(), kernelName));
  buildKernel(launch);
  rewriter.setInsertionPointAfter(launch);
  replaceLayer();
}

void PersistentKernelBuilder::replaceLayer() {
  SmallVector<Value> results;
  auto toTensor = [&](Value buffer, Type type) {
    return bufferization::ToTensorOp::create(rewriter, loc, type, buffer,
                                             /*restrict=*/true,
                                             /*writable=*/true);
  };
  for (auto [buffer, out] : llvm::zip(outputs, layer.getOutputs()))
    results.push_back(toTensor(buffer, out.getType()));
  for (auto [buffer, final] : llvm::zip(finals, layer.getFinals()))
    results.push_back(toTensor(buffer, final.getType()));
  rewriter.replaceOp(layer, results);
}
