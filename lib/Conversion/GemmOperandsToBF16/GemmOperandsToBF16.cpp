//===- GemmOperandsToBF16.cpp - bf16 operands for fp32 contractions -------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The bf16 compute type: the GEMMs read bf16 weights and activations and
// accumulate in fp32 (cuBLAS with CUDA_R_16BF inputs and CUBLAS_COMPUTE_32F,
// see lib/Runtime/Cublas.cpp). Everything else of the network (the pointwise
// epilogues, the recurrent state itself) stays fp32: only what a product
// reads is rounded.
//
// The pass works on tensors, before bufferization, so that the rounded copies
// are ordinary values: one-shot bufferization gives each its buffer, and the
// rounding itself becomes one more pointwise kernel. Rounding a value right
// after its definition, once, puts the weights' conversion before the time
// loop without a separate hoisting step, and shares it between every product
// that reads the same operand.
//
//===----------------------------------------------------------------------===//

#include "lstm/Conversion/GemmOperandsToBF16/GemmOperandsToBF16.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::lstm {
#define GEN_PASS_DEF_GEMMOPERANDSTOBF16PASS
#include "lstm/Conversion/Passes.h.inc"
} // namespace mlir::lstm

using namespace mlir;

namespace {

Type elementType(Value v) {
  return cast<ShapedType>(v.getType()).getElementType();
}

/// Whether `op` is a contraction on tensors that multiplies f32 operands into
/// an f32 accumulator (an operand that is already bf16 may be among them).
bool isF32Contraction(linalg::LinalgOp op) {
  if (!op.hasPureTensorSemantics() || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1 || !linalg::isaContractionOpInterface(op))
    return false;
  if (!elementType(op.getDpsInits()[0]).isF32())
    return false;
  bool anyF32 = false;
  for (Value input : op.getDpsInputs()) {
    if (!isa<RankedTensorType>(input.getType()))
      return false;
    Type type = elementType(input);
    if (!type.isF32() && !type.isBF16())
      return false;
    anyF32 |= type.isF32();
  }
  return anyF32;
}

/// Rounds f32 tensors to bf16, each value once.
class BF16Converter {
public:
  explicit BF16Converter(MLIRContext *ctx) : bf16(BFloat16Type::get(ctx)) {}

  /// The bf16 copy of the f32 tensor `value`, computed right after its
  /// definition so that it dominates every use of `value` and runs as rarely
  /// as `value` is computed (a weight once, the state once per step).
  Value convert(RewriterBase &rewriter, Value value) {
    Value &copy = copies[value];
    if (copy)
      return copy;
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPointAfterValue(value);
    Location loc = value.getLoc();
    auto type = cast<RankedTensorType>(value.getType());
    Value empty = tensor::EmptyOp::create(
        rewriter, loc, tensor::getMixedSizes(rewriter, loc, value), bf16);
    AffineMap identity =
        rewriter.getMultiDimIdentityMap(static_cast<unsigned>(type.getRank()));
    SmallVector<utils::IteratorType> parallel(type.getRank(),
                                              utils::IteratorType::parallel);
    copy = linalg::GenericOp::create(
               rewriter, loc, empty.getType(), ValueRange{value},
               ValueRange{empty}, ArrayRef<AffineMap>{identity, identity},
               parallel,
               [&](OpBuilder &b, Location l, ValueRange args) {
                 Value rounded = arith::TruncFOp::create(b, l, bf16, args[0]);
                 linalg::YieldOp::create(b, l, rounded);
               })
               .getResult(0);
    return copy;
  }

private:
  Type bf16;
  llvm::DenseMap<Value, Value> copies;
};

/// A named op rebuilt on the new inputs: its builder makes the body for the
/// new element types, whose cast semantics extend bf16 to the f32
/// accumulator. The attributes (indexing maps, cast) carry over; the
/// builder sets the operand segments and default maps itself.
template <typename NamedOp>
void rebuildNamed(RewriterBase &rewriter, NamedOp op, ValueRange inputs) {
  SmallVector<NamedAttribute> attributes;
  for (NamedAttribute attr : op->getAttrs())
    if (attr.getName() != "operandSegmentSizes" &&
        attr.getName() != "indexing_maps")
      attributes.push_back(attr);
  rewriter.setInsertionPoint(op);
  auto rebuilt = NamedOp::create(rewriter, op.getLoc(), op->getResultTypes(),
                                 inputs, op.getDpsInits(), attributes);
  if (Attribute maps = op->getAttr("indexing_maps"))
    rebuilt->setAttr("indexing_maps", maps);
  rewriter.replaceOp(op, rebuilt->getResults());
}

/// A generic contraction reads the new inputs: its block arguments of the
/// rounded inputs become bf16 and are extended back to f32 at the top of the
/// body, so the multiply-add itself is unchanged (and still a contraction
/// body to linalg's matchers, which look through casts).
void retypeGeneric(RewriterBase &rewriter, linalg::GenericOp op,
                   ValueRange inputs) {
  Block *body = op.getBody();
  rewriter.modifyOpInPlace(op, [&] {
    // The extensions go in operand order at the top of the body.
    rewriter.setInsertionPointToStart(body);
    for (auto [i, input] : llvm::enumerate(inputs)) {
      OpOperand &operand = *op.getDpsInputOperands()[i];
      if (operand.get() == input)
        continue;
      operand.set(input);
      BlockArgument arg = body->getArgument(i);
      Type f32 = arg.getType();
      arg.setType(elementType(input));
      Value extended = arith::ExtFOp::create(rewriter, arg.getLoc(), f32, arg);
      rewriter.replaceAllUsesExcept(arg, extended, extended.getDefiningOp());
    }
  });
}

struct GemmOperandsToBF16Pass
    : lstm::impl::GemmOperandsToBF16PassBase<GemmOperandsToBF16Pass> {
  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> contractions;
    getOperation()->walk([&](linalg::LinalgOp op) {
      if (isF32Contraction(op))
        contractions.push_back(op);
    });

    IRRewriter rewriter(&getContext());
    BF16Converter converter(&getContext());
    for (linalg::LinalgOp op : contractions) {
      SmallVector<Value> inputs;
      for (Value input : op.getDpsInputs())
        inputs.push_back(elementType(input).isF32()
                             ? converter.convert(rewriter, input)
                             : input);
      if (auto generic = dyn_cast<linalg::GenericOp>(op.getOperation())) {
        retypeGeneric(rewriter, generic, inputs);
      } else if (auto matmul = dyn_cast<linalg::MatmulOp>(op.getOperation())) {
        rebuildNamed(rewriter, matmul, inputs);
      } else if (auto batch =
                     dyn_cast<linalg::BatchMatmulOp>(op.getOperation())) {
        rebuildNamed(rewriter, batch, inputs);
      } else {
        // Other named contractions (matvec, contract, ...) are not produced
        // by the lowering; as generics they take the path above.
        rewriter.setInsertionPoint(op);
        FailureOr<linalg::GenericOp> generic =
            linalg::generalizeNamedOp(rewriter, op);
        if (failed(generic)) {
          op->emitError("lstm-gemm-operands-to-bf16: cannot rewrite this "
                        "contraction");
          return signalPassFailure();
        }
        retypeGeneric(rewriter, *generic, inputs);
      }
    }
  }
};

} // namespace
