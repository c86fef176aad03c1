//===- SeparateSharedInits.cpp - An init of its own for each writer ------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The lowering makes every product's accumulator `linalg.fill` of a
// `tensor.empty`, and every elementwise result's init a `tensor.empty`; CSE
// then merges those of equal shape. One-shot bufferization gives a value
// shared by several writers one buffer: the first writer overwrites it in
// place, and the zeros a later product accumulates into are copied out
// before (a kernel on the GPU), or unrelated results end up in one buffer,
// which keeps lstm-elide-copies from writing any of them where it is
// copied to. Each writer gets its own init, made right before it: a fill
// adjacent to its product, which the BLAS call-outs turn into beta = 0.
//
//===----------------------------------------------------------------------===//

#include "lstm/Conversion/SeparateSharedInits/SeparateSharedInits.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::lstm {
#define GEN_PASS_DEF_SEPARATESHAREDINITSPASS
#include "lstm/Conversion/Passes.h.inc"
} // namespace mlir::lstm

using namespace mlir;

namespace {

/// The ops that make `init` and that a writer can take a copy of: a
/// `tensor.empty`, or a `linalg.fill` of one (outermost first). Empty if it
/// is anything else.
SmallVector<Operation *> initMakers(Value init) {
  if (auto empty = init.getDefiningOp<tensor::EmptyOp>())
    return {empty};
  auto fill = init.getDefiningOp<linalg::FillOp>();
  if (!fill || !fill.hasPureTensorSemantics())
    return {};
  auto empty = fill.getOutputs().front().getDefiningOp<tensor::EmptyOp>();
  if (!empty)
    return {};
  return {empty, fill};
}

struct SeparateSharedInitsPass
    : lstm::impl::SeparateSharedInitsPassBase<SeparateSharedInitsPass> {
  void runOnOperation() override {
    SmallVector<OpOperand *> shared;
    // Linalg ops only: an insert_slice into a shared empty tensor is how a
    // value is assembled in another's slice (lstm-write-results-in-place,
    // lstm-concat-summed-products), and must stay in that one tensor.
    getOperation()->walk([&](linalg::LinalgOp op) {
      if (!op.hasPureTensorSemantics())
        return;
      for (OpOperand &init : op.getDpsInitsMutable()) {
        Value value = init.get();
        // One use is its own already.
        if (value.hasOneUse() || initMakers(value).empty())
          continue;
        shared.push_back(&init);
      }
    });
    IRRewriter rewriter(&getContext());
    SetVector<Operation *> originals;
    for (OpOperand *init : shared) {
      SmallVector<Operation *> makers = initMakers(init->get());
      originals.insert(makers.rbegin(), makers.rend());
      // A writer that does not read its init needs no fill: an empty
      // tensor, rather than a fill kernel that nothing reads.
      auto writer = cast<linalg::LinalgOp>(init->getOwner());
      if (!writer.payloadUsesValueFromOperand(init))
        makers.resize(1);
      rewriter.setInsertionPoint(init->getOwner());
      IRMapping map;
      Operation *copy = nullptr;
      for (Operation *maker : makers)
        copy = rewriter.clone(*maker, map);
      rewriter.modifyOpInPlace(init->getOwner(),
                               [&] { init->set(copy->getResult(0)); });
    }
    // Every writer took a copy (the last one too: its fill then sits next
    // to it); what no one reads any more goes (fills before their empties).
    for (Operation *op : originals)
      if (op->use_empty())
        rewriter.eraseOp(op);
  }
};

} // namespace
