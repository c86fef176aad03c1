//===- LSTMToLinalg.cpp - Lower the lstm dialect to linalg and scf --------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Layers become an scf.for over time carrying the state and the stacked
// outputs (LayerToLinalg.cpp); gates become linalg contractions plus one
// pointwise epilogue (GateToLinalg.cpp), lstm.pointwise one linalg.generic
// (PointwiseToLinalg.cpp). Everything stays at tensor level so that the
// same output feeds the CPU and the GPU lowerings. The pass is a dialect
// conversion with the lstm dialect illegal: whatever the patterns cannot
// lower is an error, never left behind.
//
//===----------------------------------------------------------------------===//

#include "lstm/Conversion/LSTMToLinalg/LSTMToLinalg.h"

#include "LoweringUtils.h"

#include "lstm/Dialect/LSTM/IR/LSTMOps.h"
#include "lstm/Dialect/LSTM/Utils/EmptyLayers.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"
#include "llvm/Support/MathExtras.h"

namespace mlir::lstm {
#define GEN_PASS_DEF_CONVERTLSTMTOLINALGPASS
#include "lstm/Conversion/Passes.h.inc"
} // namespace mlir::lstm

using namespace mlir;
using namespace mlir::lstm;
using namespace mlir::lstm::detail;

namespace {

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

/// Whether every tensor of the module has a size in bytes that fits in 63
/// bits, as far as its static extents tell; reports the first that does
/// not. The lowering computes offsets and strides in 64-bit integers: a
/// weight argument of 384 x (2^63 - 1) would give negative offsets, which
/// upstream's verifiers then report on IR the user never wrote.
static LogicalResult checkTensorSizes(Operation *root) {
  auto tooLarge = [](Type type) {
    auto t = dyn_cast<RankedTensorType>(type);
    if (!t || !t.getElementType().isIntOrIndexOrFloat())
      return false;
    int64_t bytes = std::max<int64_t>(
        1, llvm::divideCeil(t.getElementType().getIntOrFloatBitWidth(), 8));
    for (int64_t d : t.getShape())
      if (!ShapedType::isDynamic(d) && llvm::MulOverflow(bytes, d, bytes))
        return true;
    return false;
  };
  WalkResult result = root->walk([&](Operation *op) {
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (BlockArgument arg : block.getArguments())
          if (tooLarge(arg.getType())) {
            emitError(arg.getLoc())
                << "argument #" << arg.getArgNumber() << " of type "
                << arg.getType()
                << " is larger than 2^63 bytes, more than any buffer can be";
            return WalkResult::interrupt();
          }
    for (OpResult r : op->getResults())
      if (tooLarge(r.getType())) {
        op->emitError("result #")
            << r.getResultNumber() << " of type " << r.getType()
            << " is larger than 2^63 bytes, more than any buffer can be";
        return WalkResult::interrupt();
      }
    return WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

/// Whether every tensor.dim with a constant index names one of the tensor's
/// dimensions; reports the first that does not. The verifier accepts any
/// index (out of range, the op is undefined at run time), but upstream's
/// folders of memref.dim, which bufferization makes of it, read the shape at
/// that index: an index of -1 crashed the GPU lowering (found by the fuzzer
/// of test/Fuzz).
static LogicalResult checkDimIndices(Operation *root) {
  WalkResult result = root->walk([](tensor::DimOp dim) {
    std::optional<int64_t> index = dim.getConstantIndex();
    auto type = dyn_cast<RankedTensorType>(dim.getSource().getType());
    if (!index || !type || (*index >= 0 && *index < type.getRank()))
      return WalkResult::advance();
    dim.emitOpError("index ") << *index << " is not a dimension of " << type
                              << " (0 to " << type.getRank() - 1 << ")";
    return WalkResult::interrupt();
  });
  return failure(result.wasInterrupted());
}

/// Whether every layer's output sequences have a static feature extent (N
/// of [T, B, N]), which the lowering needs; reports the first that does
/// not. Checked up front for a message that says why, rather than the
/// conversion's "failed to legalize".
static LogicalResult checkOutputExtents(Operation *root) {
  WalkResult result = root->walk([](LayerOp layer) {
    for (auto [i, out] : llvm::enumerate(layer.getOutputs()))
      if (cast<RankedTensorType>(out.getType()).isDynamicDim(2)) {
        layer.emitOpError("output #")
            << i << " of type " << out.getType()
            << " cannot be lowered: the output sequence needs a static "
               "feature extent (N of [T, B, N])";
        return WalkResult::interrupt();
      }
    return WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

struct ConvertLSTMToLinalgPass
    : lstm::impl::ConvertLSTMToLinalgPassBase<ConvertLSTMToLinalgPass> {
  void runOnOperation() override {
    if (failed(checkTensorSizes(getOperation())) ||
        failed(checkDimIndices(getOperation())))
      return signalPassFailure();
    // Layers that statically run no step are their initial states and empty
    // outputs (EmptyLayers.h): lowered, they would slice dimensions of
    // extent 0, which upstream's verifiers reject.
    replaceEmptyLayers(getOperation());
    replaceEmptyConcats(getOperation());
    if (failed(checkOutputExtents(getOperation())))
      return signalPassFailure();
    RewritePatternSet patterns(&getContext());
    populateLSTMToLinalgPatterns(patterns);
    // Every lstm op must go; what the patterns create (linalg, tensor,
    // arith, math, scf, cf's run-time assertions) and whatever surrounds
    // the layers is left to the lowerings after this one.
    ConversionTarget target(getContext());
    target.addIllegalDialect<LSTMDialect>();
    // A persistent kernel's barriers and tensor-core ops (lstm-to-persistent)
    // are already GPU code; lstm-lower-grid-barriers expands them with the
    // kernels.
    target.addLegalOp<GridBarrierOp, BlockBarrierOp, WarpBarrierOp,
                      WarpsBarrierOp, WarpMmaOp>();
    target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
    if (failed(applyPartialConversion(getOperation(), target,
                                      std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

void mlir::lstm::populateLSTMToLinalgPatterns(RewritePatternSet &patterns) {
  populateLayerToLinalgPatterns(patterns);
  populateGateToLinalgPatterns(patterns);
  populatePointwiseToLinalgPatterns(patterns);
}
