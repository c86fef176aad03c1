//===- PersistentProducts.cpp - The products of a persistent kernel ------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The data movement and arithmetic of a persistent kernel's recurrent
// products: the values the products read, staged by the whole block in
// shared memory; the weights a warp keeps in registers; and the warp's dot
// products, its lanes splitting K and a butterfly of shuffles summing them,
// all of a group of rows at once.
//
//===----------------------------------------------------------------------===//

#include "PersistentKernelBuilder.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::lstm;
using namespace mlir::lstm::persistent;

/// Copies rows [first, first + rows) of every value that the products of
/// `phase` read into the block's shared memory, as rows of the value's
/// width K: a state or a computed value (both in two buffers [2, B, N],
/// `cur` this step's) is one N-wide segment, a concatenation one per piece,
/// an input sequence projected in the step ([T, B, K], at `step`) one K
/// wide. All threads take part. With asyncCopies, each thread starts
/// 16-byte copies (copyAsync) of every segment, and the result is true: the
/// caller's block barrier must wait for them. Otherwise, per segment,
/// thread `tid` copies elements tid, tid + blockSize, ... of its width ·
/// rows elements, kStageUnroll of them at a time: the loads first (their
/// indices clamped to the last element, so that they need no branch and are
/// in flight together), then the stores of those in range.
bool PersistentKernelBuilder::stageInputs(OpBuilder &b, unsigned phase,
                                          Value threadId, Value step, Value cur,
                                          Value first, Value rows) {
  int64_t n = plan.width;
  bool started = false;
  for (auto [input, staged] : llvm::zip(stagedInputs[phase], sharedViews)) {
    // The staged row's stride, and its width K.
    int64_t depth = stagedStride(input), k = inputWidth(input);
    struct Segment {
      /// The buffer, its leading index, the column in the staged row, the
      /// width.
      Value source, lead;
      int64_t offset, width;
    };
    SmallVector<Segment> segments;
    switch (input.kind) {
    case TermInput::Kind::State:
      segments.push_back({stateBuffers[input.index], cur, 0, k});
      break;
    case TermInput::Kind::Computed:
      segments.push_back({scratchFor(input.computed), cur, 0, k});
      break;
    case TermInput::Kind::Concat:
      for (auto [j, piece] : llvm::enumerate(plan.concats[input.index].pieces))
        segments.push_back({scratchFor(piece), cur, int64_t(j) * n, n});
      break;
    case TermInput::Kind::Input:
      segments.push_back({inputs[input.index], step, 0, k});
      break;
    }
    for (const Segment &segment : segments) {
      int64_t width = segment.width, offset = segment.offset;
      Value source = segment.source, lead = segment.lead;
      if (asyncCopies) {
        copyAsync(b, source, lead, width, offset, depth, staged, threadId,
                  first, rows);
        started = true;
        continue;
      }
      Value total = arith::MulIOp::create(b, loc, rows, index(b, width));
      Value last = arith::SubIOp::create(b, loc, total, index(b, 1));
      scf::ForOp::create(
          b, loc, threadId, total, index(b, blockSize * kStageUnroll),
          ValueRange(), [&](OpBuilder &nb, Location l, Value base, ValueRange) {
            SmallVector<Value> at, values;
            for (int64_t u = 0; u < kStageUnroll; ++u) {
              at.push_back(
                  arith::AddIOp::create(nb, l, base, index(nb, u * blockSize)));
              Value i = arith::MinUIOp::create(nb, l, at.back(), last);
              Value local = arith::DivUIOp::create(nb, l, i, index(nb, width));
              Value row = arith::AddIOp::create(nb, l, first, local);
              Value col = arith::RemUIOp::create(nb, l, i, index(nb, width));
              values.push_back(memref::LoadOp::create(
                  nb, l, source, ValueRange{lead, row, col}));
            }
            for (auto [i, v] : llvm::zip(at, values)) {
              Value inRange = arith::CmpIOp::create(
                  nb, l, arith::CmpIPredicate::ult, i, total);
              scf::IfOp::create(nb, l, inRange, [&](OpBuilder &ib, Location) {
                // Element (local, col) of the segment: staged at
                // local · K + offset + col.
                Value local =
                    arith::DivUIOp::create(ib, l, i, index(ib, width));
                Value col = arith::RemUIOp::create(ib, l, i, index(ib, width));
                Value at = arith::AddIOp::create(
                    ib, l,
                    arith::MulIOp::create(ib, l, local, index(ib, depth)),
                    arith::AddIOp::create(ib, l, col, index(ib, offset)));
                memref::StoreOp::create(ib, l, v, staged, ValueRange{at});
                scf::YieldOp::create(ib, l);
              });
            }
            scf::YieldOp::create(nb, l);
          });
    }
  }
  return started;
}

/// Starts the copies of rows [first, first + rows) of `source` ([2, B, N]
/// at `lead` = cur, or an input sequence [T, B, K] at `lead` = the step;
/// `width` its last extent) into `staged`, element (r, c) at r · depth +
/// offset + c, in 16-byte pieces (width, depth and offset are multiples of
/// 4 floats): thread `tid` copies pieces tid, tid + blockSize, ... . The
/// copies bypass L1 (other blocks wrote the values) and need no registers:
/// all of a thread's are in flight together.
void PersistentKernelBuilder::copyAsync(OpBuilder &b, Value source, Value lead,
                                        int64_t width, int64_t offset,
                                        int64_t depth, Value staged,
                                        Value threadId, Value first,
                                        Value rows) {
  constexpr int64_t kFloatsPerCopy = 4;
  int64_t perRow = width / kFloatsPerCopy;
  Value pieces = arith::MulIOp::create(b, loc, rows, index(b, perRow));
  scf::ForOp::create(
      b, loc, threadId, pieces, index(b, blockSize), ValueRange(),
      [&](OpBuilder &nb, Location l, Value i, ValueRange) {
        Value local = arith::DivUIOp::create(nb, l, i, index(nb, perRow));
        Value col = arith::MulIOp::create(
            nb, l, arith::RemUIOp::create(nb, l, i, index(nb, perRow)),
            index(nb, kFloatsPerCopy));
        Value row = arith::AddIOp::create(nb, l, first, local);
        Value at = arith::AddIOp::create(
            nb, l, arith::MulIOp::create(nb, l, local, index(nb, depth)),
            arith::AddIOp::create(nb, l, col, index(nb, offset)));
        nvgpu::DeviceAsyncCopyOp::create(
            nb, l, nvgpu::DeviceAsyncTokenType::get(nb.getContext()), staged,
            ValueRange{at}, source, ValueRange{lead, row, col},
            nb.getIndexAttr(kFloatsPerCopy), /*srcElements=*/Value(),
            /*bypassL1=*/nb.getUnitAttr());
        scf::YieldOp::create(nb, l);
      });
}

Value PersistentKernelBuilder::stagedFor(const TermInput &input) const {
  for (auto [staged, view] : llvm::zip(stagedInputs[currentPhase], sharedViews))
    if (staged == input)
      return view;
  llvm_unreachable("a product input that its phase does not stage");
}

Value PersistentKernelBuilder::scratchFor(const Computed &value) const {
  for (auto [v, buffer] : llvm::zip(scratchValues, scratch))
    if (v == value)
      return buffer;
  return Value();
}

Value PersistentKernelBuilder::carriedFor(unsigned product,
                                          int64_t column) const {
  for (auto [c, buffer] : llvm::zip(carriedColumns, carried))
    if (c == std::make_pair(product, column))
      return buffer;
  llvm_unreachable("a product column that no later phase reads");
}

Value PersistentKernelBuilder::productOperand(OpBuilder &b, Location l,
                                              Value value) {
  if (!bf16Operands)
    return value;
  // arith.truncf rounds to nearest, ties to even (cvt.rn.bf16.f32 on
  // sm_80 and later); widening back is exact.
  Value rounded = arith::TruncFOp::create(b, l, b.getBF16Type(), value);
  return arith::ExtFOp::create(b, l, b.getF32Type(), rounded);
}

/// The row of `weight` ([M, K], or [K, M] `transposed`) that column
/// `column` of `unit` multiplies: unit + column, clamped to the last row
/// where the product is narrower than the units (an LSTMP's projection, M =
/// P < N: the units past it compute the last row's sum and store nothing).
Value PersistentKernelBuilder::weightRow(OpBuilder &b, Value weight,
                                         bool transposed, Value unit,
                                         int64_t column) {
  int64_t rows = cast<MemRefType>(weight.getType()).getDimSize(transposed);
  Value row = arith::AddIOp::create(b, loc, unit, index(b, column));
  if (column + plan.width <= rows)
    return row;
  return arith::MinUIOp::create(b, loc, row, index(b, rows - 1));
}

Value PersistentKernelBuilder::weightAt(OpBuilder &b, Location l, unsigned p,
                                        unsigned t, Value weight,
                                        ValueRange at) {
  if (const std::optional<APFloat> &splat = splatWeights[p][t])
    return arith::ConstantFloatOp::create(b, l, b.getF32Type(), *splat);
  return memref::LoadOp::create(b, l, weight, at);
}

/// The weights a warp keeps in registers for the whole sequence, loaded
/// before the time loop, for one more of its units (registerWeights[s]
/// for the s-th): per product, per term, per column the product needs, the
/// ceil(N/32) elements k = lane + 32j of the row of `unit` (zero where
/// k >= N).
void PersistentKernelBuilder::loadRegisterWeights(OpBuilder &b, Value unit,
                                                  Value lane) {
  Value zero =
      arith::ConstantFloatOp::create(b, loc, b.getF32Type(), APFloat(0.0f));
  auto &perProduct = registerWeights.emplace_back();
  for (auto [p, product] : llvm::enumerate(plan.products)) {
    auto &perTerm = perProduct.emplace_back();
    for (auto [t, weight] : llvm::enumerate(weights[p])) {
      // K of this term.
      int64_t n = cast<MemRefType>(weight.getType())
                      .getDimSize(product.transposed ? 0 : 1);
      auto &perColumn = perTerm.emplace_back();
      for (int64_t column : neededColumns[p]) {
        Value row = weightRow(b, weight, product.transposed, unit, column);
        auto &values = perColumn.emplace_back();
        if (vectorTermsFor(n)) {
          // Terms 4·lane + 128·j + e, in that order (j, then e).
          Value first =
              arith::MulIOp::create(b, loc, lane, index(b, kVectorTerms));
          for (int64_t j = 0; j < n / (kLanes * kVectorTerms); ++j)
            for (int64_t e = 0; e < kVectorTerms; ++e) {
              Value k = arith::AddIOp::create(
                  b, loc, first, index(b, j * kLanes * kVectorTerms + e));
              SmallVector<Value, 2> at{row, k};
              if (product.transposed)
                std::swap(at[0], at[1]);
              values.push_back(
                  productOperand(b, loc, weightAt(b, loc, p, t, weight, at)));
            }
          continue;
        }
        for (int64_t j = 0; j < divCeil(n, kLanes); ++j) {
          Value k = arith::AddIOp::create(b, loc, lane, index(b, j * kLanes));
          bool partial = (j + 1) * kLanes > n;
          Value kc =
              partial ? arith::MinUIOp::create(b, loc, k, index(b, n - 1)) : k;
          SmallVector<Value, 2> at{row, kc};
          if (product.transposed)
            std::swap(at[0], at[1]);
          Value w = productOperand(b, loc, weightAt(b, loc, p, t, weight, at));
          if (partial)
            w = arith::SelectOp::create(
                b, loc,
                arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, k,
                                      index(b, n)),
                w, zero);
          values.push_back(w);
        }
      }
    }
  }
}

/// Lane `lane`'s partial sums of the columns `neededColumns[p]` (plus
/// `unit`) of product `p` for each of the rows staged at `localRows`, as
/// [row][column], for each of the warp's units at once: [s · rows + row]
/// [column] for its s-th. The lane sums the terms k = lane (mod 32) of the
/// dot products (reduceAcrossLanes sums the lanes'). The weights come from
/// registers (loadRegisterWeights) or, where they do not fit, from global
/// memory (L1 and L2; one unit at once), each read once for all the rows;
/// the states from the block's shared memory, each element loaded once for
/// all the units.
SmallVector<SmallVector<Value>>
PersistentKernelBuilder::buildProductPartials(OpBuilder &b, unsigned p,
                                              ArrayRef<Value> localRows,
                                              Value unit, Value lane) {
  const Product &product = plan.products[p];
  ArrayRef<int64_t> columns = neededColumns[p];
  size_t numColumns = columns.size();
  Value zero =
      arith::ConstantFloatOp::create(b, loc, b.getF32Type(), APFloat(0.0f));
  // Row-major [unit][row][column], flat: the form loops carry them in.
  size_t numRows = localRows.size();
  // Several units at once only where the weights are registers.
  size_t numUnits = size_t(unitsAtOnce);
  SmallVector<Value> acc(numUnits * numRows * numColumns, zero);
  auto sumAt = [&](size_t s, size_t r, size_t c) -> Value & {
    return acc[(s * numRows + r) * numColumns + c];
  };
  for (auto [t, term] : llvm::enumerate(product.terms)) {
    // K of this term: the width of its input's staged rows.
    int64_t n = inputWidth(term.first);
    SmallVector<Value> rowBases;
    for (Value localRow : localRows)
      rowBases.push_back(arith::MulIOp::create(
          b, loc, localRow, index(b, stagedStride(term.first))));
    Value staged = stagedFor(term.first);
    // The staged elements k of every row.
    auto stagedAt = [&](OpBuilder &nb, Location l, Value k) {
      SmallVector<Value> values;
      for (Value rowBase : rowBases)
        values.push_back(productOperand(
            nb, l,
            memref::LoadOp::create(
                nb, l, staged,
                ValueRange{arith::AddIOp::create(nb, l, rowBase, k)})));
      return values;
    };
    if (vectorTermsFor(n)) {
      // Each row's terms 4·lane + 128·j .. + 3 in one 16-byte load (a
      // quarter of the load instructions of one term at a time; the same
      // bytes).
      auto quad = VectorType::get({kVectorTerms}, b.getF32Type());
      Value first = arith::MulIOp::create(b, loc, lane, index(b, kVectorTerms));
      for (int64_t j = 0; j < n / (kLanes * kVectorTerms); ++j) {
        Value k = arith::AddIOp::create(b, loc, first,
                                        index(b, j * kLanes * kVectorTerms));
        for (auto [r, rowBase] : llvm::enumerate(rowBases)) {
          Value terms = vector::LoadOp::create(
              b, loc, quad, staged,
              ValueRange{arith::AddIOp::create(b, loc, rowBase, k)},
              /*nontemporal=*/false,
              llvm::MaybeAlign(kVectorTerms * sizeof(float)));
          for (int64_t e = 0; e < kVectorTerms; ++e) {
            Value h = productOperand(
                b, loc, vector::ExtractOp::create(b, loc, terms, e));
            for (size_t s = 0; s < numUnits; ++s)
              for (size_t c = 0; c < numColumns; ++c) {
                Value &sum = sumAt(s, r, c);
                sum = math::FmaOp::create(
                    b, loc, h,
                    registerWeights[s][p][t][c][j * kVectorTerms + e], sum);
              }
          }
        }
      }
      continue;
    }
    if (useRegisters) {
      for (int64_t j = 0; j < divCeil(n, kLanes); ++j) {
        Value k = arith::AddIOp::create(b, loc, lane, index(b, j * kLanes));
        if ((j + 1) * kLanes > n)
          k = arith::MinUIOp::create(b, loc, k, index(b, n - 1));
        SmallVector<Value> h = stagedAt(b, loc, k);
        for (auto [r, hr] : llvm::enumerate(h))
          for (size_t s = 0; s < numUnits; ++s)
            for (size_t c = 0; c < numColumns; ++c) {
              Value &sum = sumAt(s, r, c);
              sum = math::FmaOp::create(b, loc, hr,
                                        registerWeights[s][p][t][c][j], sum);
            }
      }
      continue;
    }
    Value weight = weights[p][t];
    unsigned termIndex = t;
    SmallVector<Value> weightRows;
    for (int64_t column : columns)
      weightRows.push_back(
          weightRow(b, weight, product.transposed, unit, column));
    auto accumulate = [&](OpBuilder &nb, Location l, Value k,
                          SmallVector<Value> sums) {
      SmallVector<Value> h = stagedAt(nb, l, k);
      for (auto [c, weightRow] : llvm::enumerate(weightRows)) {
        SmallVector<Value, 2> at{weightRow, k};
        if (product.transposed)
          std::swap(at[0], at[1]);
        Value w =
            productOperand(nb, l, weightAt(nb, l, p, termIndex, weight, at));
        for (auto [r, hr] : llvm::enumerate(h)) {
          Value &partial = sums[r * numColumns + c];
          partial = math::FmaOp::create(nb, l, hr, w, partial);
        }
      }
      return sums;
    };
    // A main loop over kUnrollFactor of the lane's k at a time (their
    // weight loads in flight together: one iteration would otherwise wait
    // for L2 before the next), then the rest one at a time.
    int64_t span = kLanes * kUnrollFactor;
    // The main loop's k satisfy k + span - 32 < N.
    Value mainEnd = index(b, std::max<int64_t>(n - span + kLanes, 0));
    auto main = scf::ForOp::create(
        b, loc, lane, mainEnd, index(b, span), acc,
        [&](OpBuilder &nb, Location l, Value k, ValueRange iterArgs) {
          SmallVector<Value> sums(iterArgs);
          for (int64_t j = 0; j < kUnrollFactor; ++j) {
            Value kj = arith::AddIOp::create(nb, l, k, index(nb, j * kLanes));
            sums = accumulate(nb, l, kj, sums);
          }
          scf::YieldOp::create(nb, l, sums);
        });
    // Where the main loop stopped: the first k = lane (mod span) at or past
    // mainEnd.
    Value mainSteps = arith::CeilDivUIOp::create(
        b, loc,
        arith::SubIOp::create(
            b, loc, arith::MaxUIOp::create(b, loc, mainEnd, lane), lane),
        index(b, span));
    Value restBegin = arith::AddIOp::create(
        b, loc, lane, arith::MulIOp::create(b, loc, mainSteps, index(b, span)));
    auto rest = scf::ForOp::create(
        b, loc, restBegin, index(b, n), index(b, kLanes), main.getResults(),
        [&](OpBuilder &nb, Location l, Value k, ValueRange iterArgs) {
          scf::YieldOp::create(
              nb, l, accumulate(nb, l, k, SmallVector<Value>(iterArgs)));
        });
    acc.assign(rest.getResults().begin(), rest.getResults().end());
  }
  SmallVector<SmallVector<Value>> perRow;
  for (size_t r = 0; r < numUnits * numRows; ++r)
    perRow.emplace_back(ArrayRef<Value>(acc).slice(r * numColumns, numColumns));
  return perRow;
}

/// Sums each of `values` (one partial sum per lane) over the warp, in
/// chunks of 32: per chunk of 2^m values (padded with zeros), the first m
/// rounds of a butterfly halve the values each lane holds, a lane keeping
/// the half its bit of the round selects and sending the other half to its
/// partner; the remaining 5 - m rounds add the one value left. Lane l ends
/// with the sum of the chunk's value l >> (5 - m). A plain butterfly per
/// value would take 5 shuffles each: this takes 2^m - 1 + 5 - m for all.
SmallVector<Value>
PersistentKernelBuilder::reduceAcrossLanes(OpBuilder &b, ArrayRef<Value> values,
                                           Value lane) {
  Value zero =
      arith::ConstantFloatOp::create(b, loc, b.getF32Type(), APFloat(0.0f));
  SmallVector<Value> sums;
  for (size_t start = 0; start < values.size(); start += kLanes) {
    SmallVector<Value> held(
        values.slice(start, std::min<size_t>(kLanes, values.size() - start)));
    held.resize(llvm::PowerOf2Ceil(held.size()), zero);
    for (int32_t offset = kLanes / 2; offset > 0; offset /= 2) {
      auto exchange = [&](Value send) {
        return gpu::ShuffleOp::create(b, loc, send, offset, kLanes,
                                      gpu::ShuffleMode::XOR)
            .getShuffleResult();
      };
      if (held.size() == 1) {
        held[0] = arith::AddFOp::create(b, loc, held[0], exchange(held[0]));
        continue;
      }
      Value upper = arith::CmpIOp::create(
          b, loc, arith::CmpIPredicate::ne,
          arith::AndIOp::create(b, loc, lane, index(b, offset)), index(b, 0));
      size_t half = held.size() / 2;
      SmallVector<Value> kept;
      for (size_t j = 0; j < half; ++j) {
        Value keep =
            arith::SelectOp::create(b, loc, upper, held[half + j], held[j]);
        Value send =
            arith::SelectOp::create(b, loc, upper, held[j], held[half + j]);
        kept.push_back(arith::AddFOp::create(b, loc, keep, exchange(send)));
      }
      held = std::move(kept);
    }
    sums.push_back(held[0]);
  }
  return sums;
}
