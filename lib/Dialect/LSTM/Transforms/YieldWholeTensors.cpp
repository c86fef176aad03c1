//===- YieldWholeTensors.cpp - An scf.if's views taken after it -----------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The batch bound's scf.if (PersistentStacks.cpp) has the wavefront in one
// branch, whose stored outputs are views of one [L, L+T-1, B, N] tensor,
// and the layers in the other. One-Shot Bufferize gives an if's result a
// fully dynamic layout where the branches' buffers differ; a product that
// collapses such a view to [T·B, N] cannot prove it contiguous and copies
// it. Yielding the whole tensor and viewing it after the if keeps the
// views' strides known (and lstm-collapse-before-slice collapses the whole
// tensor instead).
//
//===----------------------------------------------------------------------===//

#include "lstm/Dialect/LSTM/Transforms/Transforms.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallBitVector.h"

#include <array>

using namespace mlir;
using namespace mlir::lstm;

namespace {
/// Results of an scf.if that one branch yields as views (static offsets,
/// unit strides) of one tensor computed in that branch.
struct ViewGroup {
  Value whole;
  /// 0 for the then branch, 1 for the else branch.
  unsigned branch;
  SmallVector<unsigned> results;
  SmallVector<tensor::ExtractSliceOp> views;
};
} // namespace

/// Whether the static parts of `a` and `b` show that they do not overlap:
/// some dimension where both have a static offset and size and the two
/// ranges are disjoint.
static bool provablyDisjoint(tensor::ExtractSliceOp a,
                             tensor::ExtractSliceOp b) {
  for (unsigned d = 0, e = a.getSourceType().getRank(); d < e; ++d) {
    int64_t oa = a.getStaticOffsets()[d], ob = b.getStaticOffsets()[d];
    int64_t sa = a.getStaticSizes()[d], sb = b.getStaticSizes()[d];
    if (ShapedType::isDynamic(oa) || ShapedType::isDynamic(ob) ||
        ShapedType::isDynamic(sa) || ShapedType::isDynamic(sb))
      continue;
    if (oa + sa <= ob || ob + sb <= oa)
      return true;
  }
  return false;
}

/// Whether a buffer view of `view` would have a dynamic stride in its
/// outermost dimension, one of at least two it keeps: a dynamic extent of
/// the viewed tensor lies after that dimension. (A final state's [B, N]
/// row of an [L, B, N] tensor has static strides whatever the if yields,
/// and is left as it is.)
static bool hasDynamicOuterStride(tensor::ExtractSliceOp view) {
  if (view.getType().getRank() < 2)
    return false;
  llvm::SmallBitVector dropped = view.getDroppedDims();
  RankedTensorType wholeType = view.getSourceType();
  int64_t firstKept = 0;
  while (dropped.test(firstKept))
    ++firstKept;
  for (int64_t d = firstKept + 1; d < wholeType.getRank(); ++d)
    if (wholeType.isDynamicDim(d))
      return true;
  return false;
}

namespace {
/// A dynamic size of a view: its dimension in the viewed tensor and in the
/// view (a dynamic size is of a dimension the view keeps), and whether the
/// view spans that whole extent (offset 0, the size its `tensor.dim`).
struct DynamicSize {
  unsigned sourceDim;
  unsigned resultDim;
  bool whole;
};
} // namespace

static SmallVector<DynamicSize> dynamicSizes(tensor::ExtractSliceOp view) {
  SmallVector<DynamicSize> sizes;
  llvm::SmallBitVector dropped = view.getDroppedDims();
  unsigned resultDim = 0;
  for (auto [d, size] : llvm::enumerate(view.getMixedSizes())) {
    if (dropped.test(d))
      continue;
    if (auto value = dyn_cast<Value>(size)) {
      auto dim = value.getDefiningOp<tensor::DimOp>();
      std::optional<int64_t> index =
          dim ? dim.getConstantIndex() : std::nullopt;
      bool whole = view.getStaticOffsets()[d] == 0 && index &&
                   *index == static_cast<int64_t>(d) &&
                   dim.getSource() == view.getSource();
      sizes.push_back({static_cast<unsigned>(d), resultDim, whole});
    }
    ++resultDim;
  }
  return sizes;
}

/// `tensor.dim %v, d` as early as it is known: through the ops that can
/// say their results' extents from their operands (a layer's sequence has
/// its input's length and batch, a reshape its output shape, ...), to a
/// value defined before them, or the dim right after `v` where none can.
static Value earliestExtent(RewriterBase &rewriter, Location loc, Value v,
                            int64_t d) {
  OpBuilder::InsertionGuard guard(rewriter);
  while (auto result = dyn_cast<OpResult>(v)) {
    Operation *def = result.getOwner();
    if (!isa<ReifyRankedShapedTypeOpInterface>(def))
      break;
    rewriter.setInsertionPoint(def);
    FailureOr<OpFoldResult> size =
        reifyDimOfResult(rewriter, def, result.getResultNumber(), d);
    if (failed(size))
      break;
    if (auto attr = dyn_cast<Attribute>(*size))
      return arith::ConstantIndexOp::create(rewriter, loc,
                                            cast<IntegerAttr>(attr).getInt());
    Value extent = cast<Value>(*size);
    auto dim = extent.getDefiningOp<tensor::DimOp>();
    std::optional<int64_t> index = dim ? dim.getConstantIndex() : std::nullopt;
    if (!index)
      return extent;
    v = dim.getSource();
    d = *index;
  }
  rewriter.setInsertionPointAfterValue(v);
  return tensor::DimOp::create(rewriter, loc, v, d);
}

/// Moves the insertion point of `rewriter` in `block` after the definitions
/// of `values` that lie in it (to the block's start where none does).
static void setInsertionPointAfterAll(RewriterBase &rewriter, Block *block,
                                      ValueRange values) {
  Operation *latest = nullptr;
  for (Value v : values) {
    Operation *def = v.getDefiningOp();
    if (!def)
      continue;
    def = block->findAncestorOpInBlock(*def);
    if (def && (!latest || latest->isBeforeInBlock(def)))
      latest = def;
  }
  if (latest)
    rewriter.setInsertionPointAfter(latest);
  else
    rewriter.setInsertionPointToStart(block);
}

scf::IfOp mlir::lstm::yieldWholeTensorsOfViews(RewriterBase &rewriter,
                                               scf::IfOp choice) {
  if (choice.getNumResults() == 0 || !choice.elseBlock())
    return choice;
  std::array<Block *, 2> blocks = {choice.thenBlock(), choice.elseBlock()};
  std::array<scf::YieldOp, 2> yields = {choice.thenYield(), choice.elseYield()};
  SmallVector<ViewGroup> groups;
  // Tensors with views that may overlap: the other branch's inserts would
  // depend on their order, so all their views stay as they are.
  llvm::DenseSet<Value> overlapping;
  for (unsigned i = 0, e = choice.getNumResults(); i < e; ++i) {
    for (unsigned branch : {0u, 1u}) {
      auto view =
          yields[branch].getOperand(i).getDefiningOp<tensor::ExtractSliceOp>();
      if (!view || view->getBlock() != blocks[branch] ||
          !view.hasUnitStride() ||
          llvm::any_of(view.getStaticOffsets(), ShapedType::isDynamic) ||
          !hasDynamicOuterStride(view))
        continue;
      Value whole = view.getSource();
      Operation *def = whole.getDefiningOp();
      if (!def || def->getBlock() != blocks[branch] ||
          overlapping.contains(whole))
        continue;
      auto *group = llvm::find_if(
          groups, [&](const ViewGroup &g) { return g.whole == whole; });
      if (group == groups.end()) {
        groups.push_back({whole, branch, {}, {}});
        group = std::prev(groups.end());
      }
      if (llvm::any_of(group->views, [&](tensor::ExtractSliceOp other) {
            return !provablyDisjoint(view, other);
          })) {
        overlapping.insert(whole);
        groups.erase(group);
        break;
      }
      group->results.push_back(i);
      group->views.push_back(view);
      break;
    }
  }
  if (groups.empty())
    return choice;

  Location loc = choice.getLoc();
  Type indexType = rewriter.getIndexType();
  // The new results: the old ones that are not views, then per group the
  // whole tensor, then the dynamic sizes of every view.
  SmallVector<bool> isView(choice.getNumResults(), false);
  for (ViewGroup &g : groups)
    for (unsigned i : g.results)
      isView[i] = true;
  std::array<SmallVector<Value>, 2> operands;
  SmallVector<Type> types;
  for (unsigned i = 0, e = choice.getNumResults(); i < e; ++i)
    if (!isView[i]) {
      types.push_back(choice.getResult(i).getType());
      for (unsigned branch : {0u, 1u})
        operands[branch].push_back(yields[branch].getOperand(i));
    }
  for (ViewGroup &g : groups) {
    types.push_back(g.whole.getType());
    operands[g.branch].push_back(g.whole);
    // The other branch puts what it yields where the views are, in a
    // tensor of the same type; its dynamic extents are the furthest any
    // view reaches (what lies outside every view is never read). The
    // tensor is made as early as those extents are known, and each value
    // goes in right after it is computed, so that the op computing it can
    // write it there (lstm-write-inserted-sequences-in-place).
    unsigned other = 1 - g.branch;
    Block *block = blocks[other];
    auto wholeType = cast<RankedTensorType>(g.whole.getType());
    SmallVector<SmallVector<OpFoldResult>> sizes;
    SmallVector<Value> extentValues;
    for (auto [i, view] : llvm::zip(g.results, g.views)) {
      Value value = yields[other].getOperand(i);
      SmallVector<OpFoldResult> viewSizes = view.getMixedSizes();
      for (DynamicSize dynamic : dynamicSizes(view)) {
        Value extent = earliestExtent(rewriter, loc, value, dynamic.resultDim);
        viewSizes[dynamic.sourceDim] = extent;
        extentValues.push_back(extent);
      }
      sizes.push_back(viewSizes);
    }
    setInsertionPointAfterAll(rewriter, block, extentValues);
    SmallVector<Value> extents;
    for (int64_t d = 0; d < wholeType.getRank(); ++d) {
      if (!wholeType.isDynamicDim(d))
        continue;
      Value furthest;
      for (auto [view, viewSizes] : llvm::zip(g.views, sizes)) {
        Value end = arith::AddIOp::create(
            rewriter, loc,
            arith::ConstantIndexOp::create(rewriter, loc,
                                           view.getStaticOffsets()[d]),
            getValueOrCreateConstantIndexOp(rewriter, loc, viewSizes[d]));
        furthest = furthest
                       ? arith::MaxUIOp::create(rewriter, loc, furthest, end)
                             .getResult()
                       : end;
      }
      extents.push_back(furthest);
    }
    // Not tensor.empty: bufferization gives an empty tensor's buffer an
    // unknown layout, and the if's result then a fully dynamic one, whose
    // views the products downstream would copy again.
    Value whole =
        bufferization::AllocTensorOp::create(rewriter, loc, wholeType, extents);
    // The values in the order they are computed.
    SmallVector<unsigned> order =
        llvm::to_vector(llvm::seq<unsigned>(0, g.views.size()));
    auto position = [&](unsigned k) -> Operation * {
      Operation *def = yields[other].getOperand(g.results[k]).getDefiningOp();
      return def ? block->findAncestorOpInBlock(*def) : nullptr;
    };
    llvm::stable_sort(order, [&](unsigned a, unsigned b) {
      Operation *pa = position(a), *pb = position(b);
      if (!pb)
        return false;
      return !pa || pa->isBeforeInBlock(pb);
    });
    for (unsigned k : order) {
      Value value = yields[other].getOperand(g.results[k]);
      setInsertionPointAfterAll(rewriter, block, {value, whole});
      whole = tensor::InsertSliceOp::create(
          rewriter, loc, value, whole, g.views[k].getMixedOffsets(), sizes[k],
          g.views[k].getMixedStrides());
    }
    operands[other].push_back(whole);
  }
  for (ViewGroup &g : groups)
    for (auto [i, view] : llvm::zip(g.results, g.views))
      for (DynamicSize dynamic : dynamicSizes(view)) {
        // A whole extent is the whole tensor's after the if.
        if (dynamic.whole)
          continue;
        types.push_back(indexType);
        for (unsigned branch : {0u, 1u}) {
          rewriter.setInsertionPoint(yields[branch]);
          operands[branch].push_back(tensor::DimOp::create(
              rewriter, loc, yields[branch].getOperand(i), dynamic.resultDim));
        }
      }

  rewriter.setInsertionPoint(choice);
  auto rebuilt = scf::IfOp::create(rewriter, loc, types, choice.getCondition(),
                                   /*withElseRegion=*/true);
  rebuilt->setAttrs(choice->getAttrs());
  for (unsigned branch : {0u, 1u}) {
    Region &from = branch ? choice.getElseRegion() : choice.getThenRegion();
    Region &to = branch ? rebuilt.getElseRegion() : rebuilt.getThenRegion();
    rewriter.eraseBlock(&to.front());
    rewriter.inlineRegionBefore(from, to, to.end());
    rewriter.setInsertionPoint(yields[branch]);
    rewriter.replaceOpWithNewOp<scf::YieldOp>(yields[branch], operands[branch]);
  }

  // After the if: the views of the whole tensors it yields.
  rewriter.setInsertionPointAfter(rebuilt);
  unsigned next = 0;
  SmallVector<Value> replacements(choice.getNumResults());
  for (unsigned i = 0, e = choice.getNumResults(); i < e; ++i)
    if (!isView[i])
      replacements[i] = rebuilt.getResult(next++);
  unsigned firstSize = next + groups.size();
  for (ViewGroup &g : groups) {
    Value whole = rebuilt.getResult(next++);
    for (auto [i, view] : llvm::zip(g.results, g.views)) {
      SmallVector<OpFoldResult> viewSizes = view.getMixedSizes();
      for (DynamicSize dynamic : dynamicSizes(view))
        viewSizes[dynamic.sourceDim] =
            dynamic.whole
                ? tensor::DimOp::create(rewriter, loc, whole, dynamic.sourceDim)
                      .getResult()
                : rebuilt.getResult(firstSize++);
      replacements[i] = tensor::ExtractSliceOp::create(
          rewriter, loc, cast<RankedTensorType>(view.getType()), whole,
          view.getMixedOffsets(), viewSizes, view.getMixedStrides());
    }
  }
  rewriter.replaceOp(choice, replacements);
  return rebuilt;
}
