//===- ProductBounds.cpp - Which products are worth splitting -------------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "ProductBounds.h"

#include "lstm/Conversion/SplitTF32Gemms/SplitTF32Gemms.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/Sequence.h"

using namespace mlir;

namespace mlir::lstm::tf32 {

namespace {
Value atLeast(OpBuilder &b, Location loc, Value size, int64_t least) {
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, size,
                               arith::ConstantIndexOp::create(b, loc, least));
}
} // namespace

/// A contraction on tensors of f32 operands into an f32 accumulator with one
/// row, column and reduction dimension (and any batch); nothing if `op` is
/// not one or was split already.
std::optional<Contraction> matchContraction(linalg::LinalgOp op) {
  if (op->hasAttr(lstm::kTF32OperandsAttr))
    return std::nullopt;
  return matchF32Contraction(op);
}

/// Whether `op` passes `bounds`: true or false where the extents that
/// decide are static; else an i1 built at `b`'s insertion point from the
/// dynamic extents that `extent` gives there; a null Value where it gives
/// none for one of them.
std::variant<bool, Value> enoughWork(OpBuilder &b, linalg::LinalgOp op,
                                     const Contraction &c, const Bounds &bounds,
                                     function_ref<Value(unsigned)> extent) {
  int64_t minRows = bounds.minRows, minWork = bounds.minWork;
  Location loc = op.getLoc();
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  Value all;
  auto require = [&](Value v) {
    all = all ? arith::AndIOp::create(b, loc, all, v) : v;
  };
  llvm::DenseMap<unsigned, Value> dynamic;
  auto extentOf = [&](unsigned dim) {
    Value &e = dynamic[dim];
    if (!e)
      e = extent(dim);
    return e;
  };
  for (unsigned dim : {c.m, c.n, c.k}) {
    if (!ShapedType::isDynamic(ranges[dim])) {
      if (ranges[dim] < minRows)
        return false;
      continue;
    }
    Value e = extentOf(dim);
    if (!e)
      return Value();
    require(atLeast(b, loc, e, minRows));
  }
  // Whether the extents of `dims` multiply to at least `least` (below
  // 2^31): static where they all are, else an i1 (each dynamic factor
  // clamped to `least`: no overflow); a null Value where an extent is not
  // to be had.
  auto productAtLeast = [&](ArrayRef<unsigned> dims,
                            int64_t least) -> std::variant<bool, Value> {
    int64_t known = 1;
    Value dynamicProduct;
    for (unsigned dim : dims) {
      if (!ShapedType::isDynamic(ranges[dim])) {
        known = std::min<int64_t>(known * std::min(ranges[dim], least), least);
        continue;
      }
      Value e = extentOf(dim);
      if (!e)
        return Value();
      Value clamped = arith::MinUIOp::create(
          b, loc, e, arith::ConstantIndexOp::create(b, loc, least));
      dynamicProduct =
          dynamicProduct
              ? Value(arith::MulIOp::create(b, loc, dynamicProduct, clamped))
              : Value(clamped);
    }
    if (!dynamicProduct)
      return known >= least;
    return atLeast(b, loc, dynamicProduct, llvm::divideCeil(least, known));
  };
  if (minWork > 1) {
    SmallVector<unsigned> all =
        llvm::to_vector(llvm::seq<unsigned>(0, ranges.size()));
    std::variant<bool, Value> enough = productAtLeast(all, minWork);
    if (auto *known = std::get_if<bool>(&enough)) {
      if (!*known)
        return false;
    } else if (Value v = std::get<Value>(enough)) {
      require(v);
    } else {
      return Value();
    }
  }
  // Parts run one after another, each only as parallel as the product's
  // outputs: a deep product of few outputs (a backward step's dh = dG·R at
  // B = 128: 128 x 2048 by 8192 terms, eight parts) ran slower in parts
  // than in fp32, where cuBLAS splits the depth itself.
  bool dynamicDepth = ShapedType::isDynamic(ranges[c.k]);
  if (bounds.minPartOutputs > 1 &&
      (dynamicDepth || ranges[c.k] > bounds.maxDepth)) {
    // Enough outputs, or (a depth known at run time) one part.
    SmallVector<unsigned> outputs;
    for (unsigned dim : llvm::seq<unsigned>(0, ranges.size()))
      if (dim != c.k)
        outputs.push_back(dim);
    std::variant<bool, Value> many =
        productAtLeast(outputs, bounds.minPartOutputs);
    auto *manyKnown = std::get_if<bool>(&many);
    if (!manyKnown && !std::get<Value>(many))
      return Value();
    if (!dynamicDepth) {
      if (manyKnown && !*manyKnown)
        return false;
      if (!manyKnown)
        require(std::get<Value>(many));
    } else if (!manyKnown || !*manyKnown) {
      Value depth = extentOf(c.k);
      if (!depth)
        return Value();
      Value onePart = arith::CmpIOp::create(
          b, loc, arith::CmpIPredicate::ule, depth,
          arith::ConstantIndexOp::create(b, loc, bounds.maxDepth));
      require(manyKnown ? onePart
                        : Value(arith::OrIOp::create(b, loc, onePart,
                                                     std::get<Value>(many))));
    }
  }
  // The intensity: M·N >= r·(M·[first split] + N·[second split]); with
  // one operand split, N >= r (the first) or M >= r (the second).
  int64_t r = bounds.minIntensity;
  if (bounds.splitsFirst != bounds.splitsSecond) {
    unsigned dim = bounds.splitsFirst ? c.n : c.m;
    if (!ShapedType::isDynamic(ranges[dim])) {
      if (ranges[dim] < r)
        return false;
    } else {
      Value e = extentOf(dim);
      if (!e)
        return Value();
      require(atLeast(b, loc, e, r));
    }
  } else if (bounds.splitsFirst) {
    // Each extent clamped to 2^31: no overflow below 2^63.
    constexpr int64_t kClamp = int64_t(1) << 31;
    int64_t m = ranges[c.m], n = ranges[c.n];
    // (M - r)·(N - r) >= r²: never where an extent is at most r.
    if ((!ShapedType::isDynamic(m) && m <= r) ||
        (!ShapedType::isDynamic(n) && n <= r))
      return false;
    if (!ShapedType::isDynamic(m) && !ShapedType::isDynamic(n)) {
      m = std::min(m, kClamp);
      n = std::min(n, kClamp);
      if (m * n < r * (m + n))
        return false;
    } else {
      auto clamped = [&](unsigned dim, int64_t range) -> Value {
        if (!ShapedType::isDynamic(range))
          return arith::ConstantIndexOp::create(b, loc,
                                                std::min(range, kClamp));
        Value e = extentOf(dim);
        if (!e)
          return Value();
        return arith::MinUIOp::create(
            b, loc, e, arith::ConstantIndexOp::create(b, loc, kClamp));
      };
      Value mv = clamped(c.m, m), nv = clamped(c.n, n);
      if (!mv || !nv)
        return Value();
      Value product = arith::MulIOp::create(b, loc, mv, nv);
      Value needed =
          arith::MulIOp::create(b, loc, arith::AddIOp::create(b, loc, mv, nv),
                                arith::ConstantIndexOp::create(b, loc, r));
      require(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, product,
                                    needed));
    }
  }
  if (!all)
    return true;
  return all;
}

} // namespace mlir::lstm::tf32
