//===- SplitBatchedGemms.cpp - Deep batched GEMMs split in K --------------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// A batch of a few matrices with few rows and a deep reduction leaves most
// of a GPU idle when each output tile runs through the whole reduction:
// cuBLAS splits a single GEMM's K itself (cublasLt's split-K algorithms),
// but not a strided batch's. The split is written here instead, on tensors:
// C[l] += Σ_s X[l, s] · W[l, s]ᵀ over slices of K/S terms, the slices as
// one batch of L·S matrices, the sum a generic after it. The transposition
// of W goes right after W's definition (as lstm-gemm-operands-to-bf16 puts
// its copies), so a weight is transposed once before the loop that reads
// it, not once per step. X is transposed in the loop, unless the generics
// that compute its pieces (a backward cell's gate gradients) can also
// write them in the slices' layout: then the split follows the pieces.
//
//===----------------------------------------------------------------------===//

#include "lstm/Conversion/SplitBatchedGemms/SplitBatchedGemms.h"

#include "SplitOperands.h"
#include "lstm/Dialect/LSTM/Utils/Matmul.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/Format.h"

namespace mlir::lstm {
#define GEN_PASS_DEF_SPLITBATCHEDGEMMSPASS
#include "lstm/Conversion/Passes.h.inc"
} // namespace mlir::lstm

using namespace mlir;
using namespace mlir::lstm::split_gemms;

namespace {

/// The indexing maps of `C[l, b, h] += X[l, b, k] · W[l, h, k]`, the form
/// convert-lstm-to-linalg gives a batched gate's product.
ArrayAttr transposedWeightMaps(MLIRContext *ctx) {
  AffineExpr l, b, h, k;
  bindDims(ctx, l, b, h, k);
  Builder builder(ctx);
  return builder.getAffineMapArrayAttr({AffineMap::get(4, 0, {l, b, k}, ctx),
                                        AffineMap::get(4, 0, {l, h, k}, ctx),
                                        AffineMap::get(4, 0, {l, b, h}, ctx)});
}

/// What a split product needs to know of a matched batch_matmul.
struct SplitShape {
  int64_t groups, depth, width, splits;
  /// Whether the splits are X's pieces (piecesOfGenerics), which their
  /// generics lay out as slices, not a transposition.
  bool atPieces = false;
  /// Those slices, once built (slicesFromPieces).
  Value xSlices = nullptr;
  /// Whether the split needs no kernel of its own: X's slices written by
  /// the generic that computes X (or its pieces'), the partial products
  /// summed by the generic that reads the product (fuseIntoNeighbours).
  bool fused = false;
};

/// Slices of `depth` into at most `splits` parts of a multiple of 4 terms.
int64_t chooseSplits(int64_t depth, int64_t splits) {
  while (splits >= 2 && (depth % splits != 0 || (depth / splits) % 4 != 0))
    splits /= 2;
  return splits;
}

/// Whether only elementwise generics read `op`'s product, each once, as an
/// input: generics that can sum the partial products themselves.
bool elementwiseConsumers(linalg::BatchMatmulOp op) {
  Value product = op->getResult(0);
  llvm::SmallPtrSet<Operation *, 4> consumers;
  return !product.use_empty() &&
         llvm::all_of(product.getUses(), [&](OpOperand &use) {
           auto consumer = dyn_cast<linalg::GenericOp>(use.getOwner());
           return consumer && consumers.insert(consumer).second &&
                  consumer.hasPureTensorSemantics() &&
                  consumer.isDpsInput(&use) &&
                  consumer.getNumParallelLoops() == consumer.getNumLoops();
         });
}

/// Fuses `consumer`'s operand into it (upstream's elementwise fusion) and
/// erases what that leaves dead.
LogicalResult fuseOperand(RewriterBase &rewriter, OpOperand &operand) {
  if (!linalg::areElementwiseOpsFusable(&operand))
    return failure();
  Operation *producer = operand.get().getDefiningOp();
  Operation *consumer = operand.getOwner();
  // The fused generic goes where the builder stands: at the consumer, after
  // everything both read.
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(consumer);
  FailureOr<linalg::ElementwiseOpFusionResult> fused =
      linalg::fuseElementwiseOps(rewriter, &operand);
  if (failed(fused))
    return failure();
  for (auto [original, replacement] : fused->replacements)
    rewriter.replaceAllUsesExcept(original, replacement, fused->fusedOp);
  rewriter.eraseOp(consumer);
  if (isOpTriviallyDead(producer))
    rewriter.eraseOp(producer);
  return success();
}

/// A split product: its sum and, where X's slices are a generic's
/// (slicingGeneric), that generic.
struct SplitProduct {
  linalg::GenericOp sum;
  linalg::GenericOp slicing;
};

/// The split product of `op` (`C += X·Wᵀ` over K/S-term slices, summed
/// into C).
SplitProduct buildSplitProduct(RewriterBase &rewriter, linalg::BatchMatmulOp op,
                               const SplitShape &shape,
                               SliceTransposer &slicer) {
  Location loc = op.getLoc();
  Value x = op.getDpsInputs()[0], w = op.getDpsInputs()[1];
  Value acc = op.getDpsInits()[0];
  auto accType = cast<RankedTensorType>(acc.getType());
  // A C of zeros (the usual case: a product's fill) is not read: the sum
  // starts from the first term into the fill's tensor, and the fill is left
  // dead.
  linalg::FillOp accZeros = lstm::getZeroFill(acc);
  Value init = accZeros ? accZeros.getOutputs()[0] : acc;
  Type elementType = accType.getElementType();
  linalg::GenericOp slicing;
  Value xSlices = shape.xSlices;
  if (!xSlices && shape.fused) {
    slicing = slicingGeneric(rewriter, x, shape.splits);
    xSlices = tensor::CollapseShapeOp::create(
        rewriter, loc, slicing->getResult(0),
        ArrayRef<ReassociationIndices>{{0, 1}, {2}, {3}});
  } else if (!xSlices) {
    xSlices = slicer.transpose(rewriter, x, shape.splits,
                               /*afterDefinition=*/false);
  }
  Value wSlices = slicer.transpose(rewriter, w, shape.splits,
                                   /*afterDefinition=*/true);

  // The partial products, [L·S, B, N], from zeros.
  OpFoldResult rows = tensor::getMixedSize(rewriter, loc, init, 1);
  SmallVector<OpFoldResult> partialSizes = {
      rewriter.getIndexAttr(shape.groups * shape.splits), rows,
      rewriter.getIndexAttr(shape.width)};
  Value empty =
      tensor::EmptyOp::create(rewriter, loc, partialSizes, elementType);
  Value zero = arith::ConstantOp::create(rewriter, loc,
                                         rewriter.getZeroAttr(elementType));
  Value zeros = linalg::FillOp::create(rewriter, loc, zero, empty).getResult(0);
  auto partialType = cast<RankedTensorType>(zeros.getType());
  auto product = linalg::BatchMatmulOp::create(
      rewriter, loc, TypeRange{partialType}, ValueRange{xSlices, wSlices},
      ValueRange{zeros});
  product.setIndexingMapsAttr(transposedWeightMaps(rewriter.getContext()));

  // [L, S, B, N]; the S partial products of each [L, B, N] element summed by
  // one elementwise kernel (a reduction generic would load and store C
  // once per term).
  auto groupedType = RankedTensorType::get(
      {shape.groups, shape.splits, accType.getDimSize(1), shape.width},
      elementType);
  SmallVector<OpFoldResult> groupedSizes = {
      rewriter.getIndexAttr(shape.groups), rewriter.getIndexAttr(shape.splits),
      rows, rewriter.getIndexAttr(shape.width)};
  Value grouped = tensor::ExpandShapeOp::create(
      rewriter, loc, groupedType, product.getResult(0),
      ArrayRef<ReassociationIndices>{{0, 1}, {2}, {3}}, groupedSizes);
  SmallVector<Value> terms;
  for (int64_t s = 0; s < shape.splits; ++s) {
    SmallVector<OpFoldResult> offsets = {
        rewriter.getIndexAttr(0), rewriter.getIndexAttr(s),
        rewriter.getIndexAttr(0), rewriter.getIndexAttr(0)};
    SmallVector<OpFoldResult> sizes = groupedSizes;
    sizes[1] = rewriter.getIndexAttr(1);
    SmallVector<OpFoldResult> strides(4, rewriter.getIndexAttr(1));
    terms.push_back(tensor::ExtractSliceOp::create(
        rewriter, loc, accType, grouped, offsets, sizes, strides));
  }
  MLIRContext *ctx = rewriter.getContext();
  SmallVector<AffineMap> maps(shape.splits + 1,
                              AffineMap::getMultiDimIdentityMap(3, ctx));
  SmallVector<utils::IteratorType> iterators(3, utils::IteratorType::parallel);
  bool fromZero = static_cast<bool>(accZeros);
  auto sum = linalg::GenericOp::create(
      rewriter, loc, accType, terms, ValueRange{init}, maps, iterators,
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        // In C's order: C + P_0 + P_1 + ...
        Value sum = fromZero ? args[0] : args.back();
        for (Value term : args.drop_back().drop_front(fromZero ? 1 : 0))
          sum = arith::AddFOp::create(nb, nl, sum, term);
        linalg::YieldOp::create(nb, nl, sum);
      });
  return {sum, slicing};
}

/// The kernels of `split` taken into their neighbours: the generic that
/// computes X into the slicing one (which then writes X's slices itself),
/// the sum into the generic that reads the product.
void fuseIntoNeighbours(RewriterBase &rewriter, SplitProduct split) {
  if (split.slicing)
    (void)fuseOperand(rewriter, split.slicing->getOpOperand(0));
  // Each generic that reads the product sums the terms itself: a copy of
  // the sum fused into each (fused into one, the sum would stay a result of
  // that one for the others).
  SmallVector<OpOperand *> uses = llvm::map_to_vector(
      split.sum->getResult(0).getUses(), [](OpOperand &use) { return &use; });
  for (OpOperand *use : uses) {
    rewriter.setInsertionPoint(split.sum);
    Operation *copy = rewriter.clone(*split.sum);
    rewriter.modifyOpInPlace(use->getOwner(),
                             [&] { use->set(copy->getResult(0)); });
    (void)fuseOperand(rewriter, *use);
  }
  if (split.sum->use_empty())
    rewriter.eraseOp(split.sum);
}

struct SplitBatchedGemmsPass
    : lstm::impl::SplitBatchedGemmsPassBase<SplitBatchedGemmsPass> {
  using Base::Base;

  /// The shape of the split if `op` is a product this pass splits.
  std::optional<SplitShape> match(linalg::BatchMatmulOp op) {
    if (!op.hasPureTensorSemantics() ||
        op.getIndexingMapsAttr() != transposedWeightMaps(op.getContext()))
      return std::nullopt;
    auto x = dyn_cast<RankedTensorType>(op.getDpsInputs()[0].getType());
    auto w = dyn_cast<RankedTensorType>(op.getDpsInputs()[1].getType());
    auto acc = dyn_cast<RankedTensorType>(op.getDpsInits()[0].getType());
    if (!x || !w || !acc || !isa<FloatType>(acc.getElementType()) ||
        x.getElementType() != acc.getElementType() ||
        w.getElementType() != acc.getElementType())
      return std::nullopt;
    // The groups, the depth and the width static (the batch may not be).
    if (x.isDynamicDim(0) || x.isDynamicDim(2) || w.isDynamicDim(1))
      return std::nullopt;
    SplitShape shape{x.getDimSize(0), x.getDimSize(2), w.getDimSize(1), 0};
    if (shape.depth < minDepth)
      return std::nullopt;
    // Split at the pieces X is assembled from where generics compute them:
    // they can lay them out as the split wants (no transposition). Unless
    // that makes fewer than half the slices: appleyard's LSTM gained from
    // its four gates' 16 matrices of depth 512 against 32 of depth 256 and
    // the transposition, Cho's GRU lost from its three gates' 12 (15.95 ->
    // 16.21 ms a training step).
    shape.splits = chooseSplits(shape.depth, splits);
    if (std::optional<PieceResults> pieces =
            piecesOfGenerics(op.getDpsInputs()[0], 2 * splits);
        pieces && 2 * static_cast<int64_t>(pieces->size()) >= shape.splits) {
      shape.splits = pieces->size();
      shape.atPieces = true;
    }
    if (shape.splits < 2)
      return std::nullopt;
    shape.fused = lstm::getZeroFill(op.getDpsInits()[0]) &&
                  elementwiseConsumers(op) &&
                  (shape.atPieces || elementwiseProducer(op.getDpsInputs()[0]));
    // A product whose matrices are wide enough for the GPU's tiles gains
    // less from the split than its transpositions and sum cost: a forward
    // step's [L, B, N] × [L, N, 4N] measured slower split, Cho's GRU's
    // backward [L, B, 3N] × [L, 2N, 3N] (1.5 times as deep as wide) faster.
    // A split that needs no kernel of its own costs only the partial
    // products' memory: its own bound.
    double ratio = shape.fused ? fusedDepthRatio : depthRatio;
    if (static_cast<double>(shape.depth) <
        ratio * static_cast<double>(shape.width))
      return std::nullopt;
    // A static batch below min-rows keeps the whole product where the
    // split would cost kernels (a dynamic one decides at run time).
    if (!shape.fused && !x.isDynamicDim(1) && x.getDimSize(1) < minRows)
      return std::nullopt;
    return shape;
  }

  void runOnOperation() override {
    if (splits < 1 || minDepth < 1 || minRows < 0 || !(depthRatio > 0) ||
        !(fusedDepthRatio > 0)) {
      // The ratios as written (%g), not in the diagnostic's scientific form.
      auto ratioText = [](double ratio) {
        std::string text;
        llvm::raw_string_ostream(text) << llvm::format("%g", ratio);
        return text;
      };
      emitError(getOperation()->getLoc())
          << "lstm-split-batched-gemms: splits ("
          << Twine(static_cast<int64_t>(splits)) << "), min-depth ("
          << Twine(static_cast<int64_t>(minDepth)) << "), depth-ratio ("
          << ratioText(depthRatio) << ") and fused-depth-ratio ("
          << ratioText(fusedDepthRatio) << ") must be positive, min-rows ("
          << Twine(static_cast<int64_t>(minRows)) << ") not negative";
      return signalPassFailure();
    }
    SmallVector<std::pair<linalg::BatchMatmulOp, SplitShape>> products;
    getOperation()->walk([&](linalg::BatchMatmulOp op) {
      if (std::optional<SplitShape> shape = match(op))
        products.push_back({op, *shape});
    });
    IRRewriter rewriter(&getContext());
    SliceTransposer slicer;
    llvm::SetVector<Operation *> fills;
    for (auto [op, shape] : products) {
      if (linalg::FillOp zeros = lstm::getZeroFill(op.getDpsInits()[0]))
        fills.insert(zeros);
      Value x = op.getDpsInputs()[0];
      // The pieces found again: building another product's slices may have
      // replaced their generics.
      if (shape.atPieces)
        if (std::optional<PieceResults> pieces =
                piecesOfGenerics(x, 2 * splits))
          shape.xSlices = slicesFromPieces(rewriter, x, *pieces);
      rewriter.setInsertionPoint(op);
      Location loc = op.getLoc();
      // A split that needs no kernel of its own is made whatever the batch.
      if (shape.fused || !cast<RankedTensorType>(x.getType()).isDynamicDim(1)) {
        SplitProduct split = buildSplitProduct(rewriter, op, shape, slicer);
        rewriter.replaceOp(op, split.sum->getResults());
        if (shape.fused)
          fuseIntoNeighbours(rewriter, split);
        continue;
      }
      // Below min-rows rows the whole product: the transposition and the
      // sum would cost more than the split gains.
      Value rows = tensor::DimOp::create(rewriter, loc, x, 1);
      Value enough = arith::CmpIOp::create(
          rewriter, loc, arith::CmpIPredicate::sge, rows,
          arith::ConstantIndexOp::create(rewriter, loc, minRows));
      auto branch = scf::IfOp::create(rewriter, loc, op->getResultTypes(),
                                      enough, /*withElseRegion=*/true);
      rewriter.setInsertionPointToStart(branch.thenBlock());
      SplitProduct split = buildSplitProduct(rewriter, op, shape, slicer);
      scf::YieldOp::create(rewriter, loc, split.sum->getResults());
      rewriter.setInsertionPointToStart(branch.elseBlock());
      // The whole product's zeros made in its branch: the split one does not
      // read them.
      IRMapping zerosInBranch;
      Value acc = op.getDpsInits()[0];
      if (linalg::FillOp zeros = lstm::getZeroFill(acc))
        zerosInBranch.map(acc, rewriter.clone(*zeros)->getResult(0));
      Operation *whole = rewriter.clone(*op, zerosInBranch);
      scf::YieldOp::create(rewriter, loc, whole->getResults());
      rewriter.replaceOp(op, branch.getResults());
    }
    // Zeros that only the products read: bufferization would still fill
    // them.
    for (Operation *fill : fills)
      if (fill->use_empty())
        rewriter.eraseOp(fill);
  }
};

} // namespace
