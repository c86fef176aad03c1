//===- GemmCall.cpp - Buffer-level GEMMs as calls of a BLAS ---------------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// See GemmCall.h. The rewrite runs on memrefs, after bufferization, so that
// it sees the layouts the products really have: a BLAS reads row-major
// matrices with contiguous rows and any leading dimension, which views of
// sequences and of packed weights are.
//
//===----------------------------------------------------------------------===//

#include "lstm/Conversion/Utils/GemmCall.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;
using namespace mlir::lstm;

Type GemmMatch::getElementTypeA() const {
  return cast<MemRefType>(a.memref.getType()).getElementType();
}

Type GemmMatch::getElementTypeC() const {
  return cast<MemRefType>(c.memref.getType()).getElementType();
}

/// The memref position that `map` reads loop dimension `dim` at, if any.
static std::optional<int64_t> positionOf(AffineMap map, unsigned dim) {
  for (auto [i, expr] : llvm::enumerate(map.getResults()))
    if (auto d = dyn_cast<AffineDimExpr>(expr); d && d.getPosition() == dim)
      return i;
  return std::nullopt;
}

/// Whether `value` is a strided memref whose last dimension may be
/// contiguous (stride 1), the one requirement a BLAS puts on a row-major
/// view of it; `dynamic` tells whether only run time can say.
static bool mayHaveContiguousRows(Value value, int64_t rank, bool &dynamic) {
  auto type = dyn_cast<MemRefType>(value.getType());
  if (!type || type.getRank() != rank)
    return false;
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset)))
    return false;
  dynamic = ShapedType::isDynamic(strides.back());
  return dynamic || strides.back() == 1;
}

FailureOr<GemmMatch> lstm::matchGemm(linalg::LinalgOp op) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1 || !linalg::isaContractionOpInterface(op))
    return failure();
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(op);
  if (failed(dims) || dims->m.size() != 1 || dims->n.size() != 1 ||
      dims->k.size() != 1 || dims->batch.size() > 1)
    return failure();

  GemmMatch match;
  match.op = op;
  match.m = dims->m.front();
  match.n = dims->n.front();
  match.k = dims->k.front();
  if (!dims->batch.empty())
    match.batch = dims->batch.front();

  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  // Fills `operand` from the map of operand `index`: which memref dimension
  // holds the batch, the rows (`row` loop dimension) and the columns.
  auto layout = [&](unsigned index, unsigned row, unsigned col,
                    GemmOperand &operand) {
    AffineMap map = maps[index];
    operand.memref = op->getOperand(index);
    std::optional<int64_t> r = positionOf(map, row), c = positionOf(map, col);
    if (!r || !c)
      return false;
    operand.batchDim = -1;
    if (match.batch) {
      if (std::optional<int64_t> bd = positionOf(map, *match.batch))
        operand.batchDim = *bd;
    }
    int64_t rank = map.getNumResults();
    // The batch (if read) comes first, and each matrix is 2-D.
    if (rank != (operand.batchDim >= 0 ? 3 : 2) ||
        (operand.batchDim >= 0 && operand.batchDim != 0))
      return false;
    int64_t first = operand.batchDim >= 0 ? 1 : 0;
    if (*r == first && *c == first + 1) {
      operand.transposed = false;
    } else if (*c == first && *r == first + 1) {
      operand.transposed = true;
    } else {
      return false;
    }
    operand.rowDim = operand.transposed ? *c : *r;
    operand.colDim = operand.transposed ? *r : *c;
    return mayHaveContiguousRows(operand.memref, rank,
                                 operand.dynamicColumnStride);
  };
  if (!layout(0, match.m, match.k, match.a) ||
      !layout(1, match.k, match.n, match.b) ||
      !layout(2, match.m, match.n, match.c) || match.c.transposed)
    return failure();
  // The result has one matrix per batch index.
  if (match.batch && match.c.batchDim < 0)
    return failure();
  // A and B of one element type (what every BLAS entry point takes).
  auto elementType = [](Value v) {
    return cast<MemRefType>(v.getType()).getElementType();
  };
  if (elementType(match.a.memref) != elementType(match.b.memref))
    return failure();
  return match;
}

void lstm::collapseLeadingRowDims(RewriterBase &rewriter,
                                  linalg::GenericOp op) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1 || !linalg::isaContractionOpInterface(op))
    return;
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(op);
  if (failed(dims) || dims->m.size() != 2 || dims->n.size() != 1 ||
      dims->k.size() != 1 || !dims->batch.empty())
    return;
  unsigned m0 = dims->m[0], m1 = dims->m[1], n = dims->n[0], k = dims->k[0];
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  MLIRContext *ctx = op.getContext();
  auto dimsMap = [&](ArrayRef<unsigned> d) {
    SmallVector<AffineExpr> exprs;
    for (unsigned i : d)
      exprs.push_back(getAffineDimExpr(i, ctx));
    return AffineMap::get(op.getNumLoops(), 0, exprs, ctx);
  };
  auto identity = [](Value v) {
    auto type = dyn_cast<MemRefType>(v.getType());
    return type && type.getLayout().isIdentity();
  };
  Value a = op.getDpsInputs()[0], b = op.getDpsInputs()[1],
        c = op.getDpsInits()[0];
  if (maps[0] != dimsMap({m0, m1, k}) || maps[2] != dimsMap({m0, m1, n}) ||
      !identity(a) || !identity(c))
    return;
  // B reads only n and k: its map carries over with the new numbering.
  SmallVector<AffineExpr> bExprs;
  for (AffineExpr e : maps[1].getResults()) {
    auto d = dyn_cast<AffineDimExpr>(e);
    if (!d || (d.getPosition() != n && d.getPosition() != k))
      return;
    bExprs.push_back(getAffineDimExpr(d.getPosition() == n ? 1 : 2, ctx));
  }

  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(op);
  Location loc = op.getLoc();
  SmallVector<ReassociationIndices> rows = {{0, 1}, {2}};
  Value a2 = memref::CollapseShapeOp::create(rewriter, loc, a, rows);
  Value c2 = memref::CollapseShapeOp::create(rewriter, loc, c, rows);
  AffineExpr dm = getAffineDimExpr(0, ctx), dn = getAffineDimExpr(1, ctx),
             dk = getAffineDimExpr(2, ctx);
  SmallVector<AffineMap> newMaps = {AffineMap::get(3, 0, {dm, dk}, ctx),
                                    AffineMap::get(3, 0, bExprs, ctx),
                                    AffineMap::get(3, 0, {dm, dn}, ctx)};
  auto collapsed = linalg::GenericOp::create(
      rewriter, loc, TypeRange{}, ValueRange{a2, b}, ValueRange{c2}, newMaps,
      {utils::IteratorType::parallel, utils::IteratorType::parallel,
       utils::IteratorType::reduction});
  rewriter.inlineRegionBefore(op.getRegion(), collapsed.getRegion(),
                              collapsed.getRegion().end());
  rewriter.eraseOp(op);
}

SmallVector<GemmMatch> lstm::collectGemms(RewriterBase &rewriter,
                                          ModuleOp module) {
  SmallVector<linalg::GenericOp> generics;
  module.walk([&](linalg::GenericOp op) { generics.push_back(op); });
  for (linalg::GenericOp op : generics)
    collapseLeadingRowDims(rewriter, op);
  SmallVector<GemmMatch> gemms;
  module.walk([&](linalg::LinalgOp op) {
    if (op->getParentOfType<func::FuncOp>() == nullptr)
      return;
    if (FailureOr<GemmMatch> g = matchGemm(op); succeeded(g))
      gemms.push_back(*g);
  });
  return gemms;
}

/// Whether `root` and the ops nested in it touch no memory, but for
/// `cf.assert`s: the run-time checks that lstm-generate-runtime-checks puts
/// before an op (an `scf.if` of asserts). An assert declares a write so
/// that nothing moves across it, but a failed check aborts: no buffer it
/// could leave half-written is read again.
static bool touchesNoMemoryButChecks(Operation *root) {
  WalkResult walk = root->walk([](Operation *op) {
    if (isa<cf::AssertOp>(op))
      return WalkResult::advance();
    // An op's own effects, if it declares any; its regions' ops are
    // walked next where it has recursive effects.
    if (auto effects = dyn_cast<MemoryEffectOpInterface>(op))
      return effects.hasNoEffect() ? WalkResult::advance()
                                   : WalkResult::interrupt();
    return op->hasTrait<OpTrait::HasRecursiveMemoryEffects>()
               ? WalkResult::advance()
               : WalkResult::interrupt();
  });
  return !walk.wasInterrupted();
}

/// The zero fill of `c` right before `op` (nothing in between touches
/// memory but run-time checks), which beta = 0 makes unnecessary. The
/// checks of a contraction's operands sit between it and its fill: the
/// backward's dW and dx GEMMs of char-rnn's layers kept a zero-fill kernel
/// each.
static linalg::FillOp zeroFillBefore(Operation *op, Value c) {
  for (Operation *prev = op->getPrevNode(); prev; prev = prev->getPrevNode()) {
    if (auto fill = dyn_cast<linalg::FillOp>(prev)) {
      if (fill.getOutputs().front() != c)
        return nullptr;
      Value value = fill.getInputs().front();
      return matchPattern(value, m_AnyZeroFloat()) ? fill : nullptr;
    }
    if (!touchesNoMemoryButChecks(prev))
      return nullptr;
  }
  return nullptr;
}

namespace {
/// Builds the values of a GEMM call's arguments at one place.
class GemmCallBuilder {
public:
  GemmCallBuilder(OpBuilder &builder, Location loc)
      : b(builder), loc(loc), i32(b.getI32Type()), i64(b.getI64Type()) {}

  /// The address of the first element of `memref`, as !llvm.ptr.
  Value pointer(Value memref) {
    auto type = cast<MemRefType>(memref.getType());
    memref::ExtractStridedMetadataOp meta = metadata(memref);
    Value base = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, memref);
    int64_t bytes = type.getElementTypeBitWidth() / 8;
    Value offset =
        arith::MulIOp::create(b, loc, meta.getOffset(),
                              arith::ConstantIndexOp::create(b, loc, bytes));
    Value address = arith::AddIOp::create(b, loc, base, offset);
    Value asInt = arith::IndexCastOp::create(b, loc, i64, address);
    return LLVM::IntToPtrOp::create(
        b, loc, LLVM::LLVMPointerType::get(b.getContext()), asInt);
  }

  /// The row stride (leading dimension) and batch stride of an operand.
  std::pair<Value, Value> strides(const GemmOperand &operand) {
    memref::ExtractStridedMetadataOp meta = metadata(operand.memref);
    int64_t rowStridePos = operand.batchDim >= 0 ? 1 : 0;
    Value lead = arith::IndexCastOp::create(b, loc, i64,
                                            meta.getStrides()[rowStridePos]);
    Value batch = operand.batchDim >= 0
                      ? arith::IndexCastOp::create(
                            b, loc, i64, meta.getStrides()[operand.batchDim])
                            .getResult()
                      : int64(0);
    return {lead, batch};
  }

  Value int32(int64_t v) {
    return arith::ConstantIntOp::create(b, loc, i32, v);
  }
  Value int64(int64_t v) {
    return arith::ConstantIntOp::create(b, loc, i64, v);
  }
  Value index64(Value v) { return arith::IndexCastOp::create(b, loc, i64, v); }
  Value f32(double v) {
    return arith::ConstantFloatOp::create(b, loc, b.getF32Type(),
                                          APFloat(static_cast<float>(v)));
  }

private:
  memref::ExtractStridedMetadataOp metadata(Value memref) {
    auto &meta = metadataOf[memref];
    if (!meta)
      meta = memref::ExtractStridedMetadataOp::create(b, loc, memref);
    return meta;
  }

  OpBuilder &b;
  Location loc;
  Type i32, i64;
  llvm::DenseMap<Value, memref::ExtractStridedMetadataOp> metadataOf;
};
} // namespace

func::FuncOp lstm::declareGemmFunction(ModuleOp module, StringRef name,
                                       TypeRange prefixTypes) {
  if (auto f = module.lookupSymbol<func::FuncOp>(name))
    return f;
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  Type i32 = b.getI32Type(), i64 = b.getI64Type(), f32 = b.getF32Type();
  Type ptr = LLVM::LLVMPointerType::get(b.getContext());
  SmallVector<Type> inputs(prefixTypes);
  llvm::append_range(inputs,
                     ArrayRef<Type>{i32, i32, i64, i64, i64, f32, ptr, i64, i64,
                                    ptr, i64, i64, f32, ptr, i64, i64, i64});
  auto f = func::FuncOp::create(b, module.getLoc(), name,
                                b.getFunctionType(inputs, {}));
  f.setPrivate();
  return f;
}

/// The extent of loop dimension `dim` when some operand's type gives it.
static std::optional<int64_t> staticExtent(const GemmMatch &g, unsigned dim) {
  linalg::LinalgOp op = g.op;
  std::optional<int64_t> extent;
  for (OpOperand &operand : op->getOpOperands()) {
    auto type = cast<MemRefType>(operand.get().getType());
    std::optional<int64_t> pos =
        positionOf(op.getMatchingIndexingMap(&operand), dim);
    if (pos && !type.isDynamicDim(*pos))
      extent = type.getDimSize(*pos);
  }
  return extent;
}

/// The extent of loop dimension `dim` of the contraction, as an index.
static Value loopExtent(OpBuilder &b, Location loc, const GemmMatch &g,
                        unsigned dim) {
  linalg::LinalgOp op = g.op;
  for (OpOperand &operand : op->getOpOperands()) {
    AffineMap map = op.getMatchingIndexingMap(&operand);
    std::optional<int64_t> pos = positionOf(map, dim);
    if (!pos)
      continue;
    // Static extents stay constants, so that the size decision is static.
    auto type = cast<MemRefType>(operand.get().getType());
    if (!type.isDynamicDim(*pos))
      return arith::ConstantIndexOp::create(b, loc, type.getDimSize(*pos));
    return memref::DimOp::create(b, loc, operand.get(), *pos);
  }
  llvm_unreachable("every loop dimension of a contraction is read");
}

/// For an operand whose column stride is dynamic: whether, at run time, its
/// rows are contiguous and its leading dimension is one a BLAS accepts (at
/// least the row length, and at least 1). Null when the type settles it.
static Value runTimeLayoutCheck(OpBuilder &b, Location loc,
                                const GemmOperand &operand) {
  if (!operand.dynamicColumnStride)
    return Value();
  auto meta = memref::ExtractStridedMetadataOp::create(b, loc, operand.memref);
  int64_t rank = cast<MemRefType>(operand.memref.getType()).getRank();
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value rowStride = meta.getStrides()[rank - 2];
  Value rowLength = meta.getSizes()[rank - 1];
  Value contiguous = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                           meta.getStrides()[rank - 1], one);
  Value longEnough =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, rowStride,
                            arith::MaxSIOp::create(b, loc, rowLength, one));
  return arith::AndIOp::create(b, loc, contiguous, longEnough);
}

void lstm::replaceGemmWithCall(RewriterBase &rewriter, const GemmMatch &g,
                               func::FuncOp callee, ValueRange prefix,
                               int64_t minSize) {
  Operation *op = g.op;
  Location loc = op->getLoc();
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(op);

  // beta = 0 replaces the zero fill of the accumulator. (The call goes
  // where the contraction is: what defines its operands may follow the
  // fill.)
  linalg::FillOp fill = zeroFillBefore(op, g.c.memref);

  // Small enough to stay a loop nest or kernel whatever the run-time sizes?
  if (minSize > 0) {
    int64_t size = 1;
    bool allStatic = true;
    for (std::optional<unsigned> dim :
         {std::optional<unsigned>(g.m), std::optional<unsigned>(g.n),
          std::optional<unsigned>(g.k), g.batch}) {
      if (!dim)
        continue;
      std::optional<int64_t> e = staticExtent(g, *dim);
      allStatic &= e.has_value();
      size *= e.value_or(1);
    }
    if (allStatic && size < minSize)
      return;
  }

  Value m = loopExtent(rewriter, loc, g, g.m),
        n = loopExtent(rewriter, loc, g, g.n),
        k = loopExtent(rewriter, loc, g, g.k);
  Value batch = g.batch ? loopExtent(rewriter, loc, g, *g.batch)
                        : arith::ConstantIndexOp::create(rewriter, loc, 1);

  // With a dynamic extent, the size decision is taken at run time, and so
  // is the layout decision for operands whose strides only run time knows.
  Value useCall;
  for (const GemmOperand *operand : {&g.a, &g.b, &g.c})
    if (Value ok = runTimeLayoutCheck(rewriter, loc, *operand))
      useCall =
          useCall ? arith::AndIOp::create(rewriter, loc, useCall, ok) : ok;
  if (minSize > 0) {
    SmallVector<Value> extents = {m, n, k, batch};
    bool allStatic = llvm::all_of(
        extents, [](Value e) { return getConstantIntValue(e).has_value(); });
    if (!allStatic) {
      Value size = extents[0];
      for (Value e : ArrayRef(extents).drop_front())
        size = arith::MulIOp::create(rewriter, loc, size, e);
      Value large = arith::CmpIOp::create(
          rewriter, loc, arith::CmpIPredicate::sge, size,
          arith::ConstantIndexOp::create(rewriter, loc, minSize));
      useCall = useCall ? arith::AndIOp::create(rewriter, loc, useCall, large)
                        : large;
    }
  }

  auto emitCall = [&](OpBuilder &cb) {
    GemmCallBuilder call(cb, loc);
    auto [lda, strideA] = call.strides(g.a);
    auto [ldb, strideB] = call.strides(g.b);
    auto [ldc, strideC] = call.strides(g.c);
    SmallVector<Value> args(prefix);
    llvm::append_range(
        args,
        ArrayRef<Value>{call.int32(g.a.transposed), call.int32(g.b.transposed),
                        call.index64(m), call.index64(n), call.index64(k),
                        call.f32(1.0), call.pointer(g.a.memref), lda, strideA,
                        call.pointer(g.b.memref), ldb, strideB,
                        call.f32(fill ? 0.0 : 1.0), call.pointer(g.c.memref),
                        ldc, strideC, call.index64(batch)});
    func::CallOp::create(cb, loc, callee, args);
  };

  if (!useCall) {
    emitCall(rewriter);
    if (fill)
      rewriter.eraseOp(fill);
    rewriter.eraseOp(op);
    return;
  }

  // Both versions: the fill and the contraction move to the else branch.
  auto ifOp =
      scf::IfOp::create(rewriter, loc, useCall, /*withElseRegion=*/true);
  OpBuilder thenBuilder = ifOp.getThenBodyBuilder();
  emitCall(thenBuilder);
  Block *elseBlock = ifOp.elseBlock();
  if (fill)
    rewriter.moveOpBefore(fill, elseBlock->getTerminator());
  rewriter.moveOpBefore(op, elseBlock->getTerminator());
}
