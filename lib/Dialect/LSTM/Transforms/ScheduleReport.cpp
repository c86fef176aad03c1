//===- ScheduleReport.cpp - Per-step schedule of every layer --------------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// What the optimisation passes buy is visible in a few numbers per layer:
// how many GEMMs and pointwise kernels one step launches, how many GEMMs
// run once before the loop, and how many steps run one after another. This
// pass prints them, one greppable line per layer, and changes nothing.
//
//===----------------------------------------------------------------------===//

#include "lstm/Dialect/LSTM/Transforms/Passes.h"

#include "lstm/Conversion/LSTMToPersistent/LSTMToPersistent.h"
#include "lstm/Dialect/LSTM/IR/LSTMOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::lstm {
#define GEN_PASS_DEF_LSTMSCHEDULEREPORTPASS
#include "lstm/Dialect/LSTM/Transforms/Passes.h.inc"
} // namespace mlir::lstm

using namespace mlir;
using namespace mlir::lstm;

namespace {
/// The kernels one step of a cell launches.
struct StepKernels {
  unsigned gemms = 0;
  unsigned pointwise = 0;
};
} // namespace

/// Counts the kernels of one step of `cell`. This is the one place that
/// decides what counts, so that new ops are taught here and nowhere else:
///
/// - every `(input, weight)` pair of an `lstm.gate` is one GEMM;
/// - a gate's epilogue (activation other than `identity`, addends, biases,
///   peephole) is one pointwise kernel; a bare GEMM (`identity`, products
///   only) has none, and a gate without products is only its epilogue;
/// - `lstm.one_minus` and every `arith`/`math` op on tensors is one
///   pointwise kernel;
/// - an op that holds a region (the fused pointwise region that
///   `lstm-fuse-elementwise` will emit) is one kernel, whatever it holds:
///   fusing is exactly what makes its body a single launch;
/// - views and constants (`tensor.extract_slice`, `arith.constant` on
///   scalars) launch nothing.
static StepKernels countStepKernels(Block &cell) {
  StepKernels kernels;
  for (Operation &op : cell.without_terminator()) {
    if (auto gate = dyn_cast<GateOp>(op)) {
      kernels.gemms += gate.getInputs().size();
      bool bareGemm = !gate.getInputs().empty() &&
                      gate.getActivation() == Activation::identity &&
                      gate.getAddends().empty() && gate.getBiases().empty() &&
                      !gate.getPeephole();
      if (!bareGemm)
        ++kernels.pointwise;
      continue;
    }
    if (op.getNumRegions() > 0) {
      ++kernels.pointwise;
      continue;
    }
    if (isa<OneMinusOp>(op)) {
      ++kernels.pointwise;
      continue;
    }
    bool onTensors = llvm::any_of(op.getResultTypes(), [](Type type) {
      return isa<RankedTensorType>(type);
    });
    if (onTensors && !isa<arith::ConstantOp>(op) &&
        isa<arith::ArithDialect, math::MathDialect>(op.getDialect()))
      ++kernels.pointwise;
  }
  return kernels;
}

/// The matrix products computed before `layer` for all of its steps: those
/// of the `lstm.gate`s whose results reach the layer's `ins` through
/// reshapes (the form `lstm-hoist-input-projection` emits).
static unsigned countHoistedGemms(LayerOp layer) {
  unsigned gemms = 0;
  for (Value seq : layer.getInputs()) {
    Value v = seq;
    while (Operation *def = v.getDefiningOp()) {
      if (auto gate = dyn_cast<GateOp>(def)) {
        gemms += gate.getInputs().size();
        break;
      }
      if (auto expand = dyn_cast<tensor::ExpandShapeOp>(def)) {
        v = expand.getSrc();
        continue;
      }
      if (auto cast = dyn_cast<tensor::CastOp>(def)) {
        v = cast.getSource();
        continue;
      }
      break;
    }
  }
  return gemms;
}

/// The matrix products computed after `layer` over all of its steps at once
/// from its output sequences (seen through reshapes): what the backward
/// layers of lstm-differentiate leave to the end, the weight gradients
/// dZ^T X and the input gradients dZ W. Contractions in linalg count one,
/// `lstm.gate`s one per product.
static unsigned countGemmsAfter(LayerOp layer) {
  unsigned gemms = 0;
  SmallVector<Value> worklist(layer.getOutputs().begin(),
                              layer.getOutputs().end());
  llvm::SmallPtrSet<Operation *, 8> counted;
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    for (Operation *user : v.getUsers()) {
      if (isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp, tensor::CastOp>(
              user)) {
        worklist.push_back(user->getResult(0));
        continue;
      }
      if (!counted.insert(user).second)
        continue;
      if (auto gate = dyn_cast<GateOp>(user))
        gemms += gate.getInputs().size();
      else if (auto linalgOp = dyn_cast<linalg::LinalgOp>(user);
               linalgOp && linalg::isaContractionOpInterface(linalgOp))
        ++gemms;
    }
  }
  return gemms;
}

/// ` tensor-cores=B>=N (KIND)` where a kernel built with `options` runs on
/// tensor cores from batch `from` (0: never).
static void printTensorCores(raw_ostream &os, int64_t from,
                             const PersistentOptions &options) {
  if (from < 1)
    return;
  os << " tensor-cores=B>=" << from << " ("
     << (options.bf16Operands ? "bf16"
         : options.splitTF32  ? "3xtf32"
                              : "tf32")
     << ")";
}

/// One line for `layer`, the `index`-th layer of function `function`;
/// with `persistent`, what lstm-to-persistent does with it under `options`,
/// and `stack` where it runs the layer in one kernel with other layers
/// (their indices in the function, the first `firstIndex`).
static void printLayer(raw_ostream &os, StringRef function, unsigned index,
                       LayerOp layer, const PersistentOptions *persistent,
                       const StackChoice *stack, unsigned firstIndex) {
  StepKernels step = countStepKernels(layer.getBody().front());
  auto seqType = cast<RankedTensorType>(layer.getInputs().front().getType());
  os << "@" << function << " layer " << index << " ("
     << stringifyDirection(layer.getDirection())
     << "): gemms/step=" << step.gemms << " pointwise/step=" << step.pointwise
     << " hoisted-gemms=" << countHoistedGemms(layer) << " steps=";
  if (seqType.isDynamicDim(0))
    os << "T";
  else
    os << seqType.getDimSize(0);
  os << " gemms-after=" << countGemmsAfter(layer);
  if (persistent) {
    PersistentChoice choice = choosePersistent(layer, *persistent);
    if (choice.maxBatch > 0) {
      os << " persistent=B<=" << choice.maxBatch;
      printTensorCores(os, choice.tensorCoresFromBatch, *persistent);
    } else {
      os << " persistent=no (" << choice.reason << ")";
    }
    if (stack) {
      os << " stack=" << firstIndex << "-"
         << firstIndex + stack->layers.size() - 1 << " (one kernel of "
         << stack->blocks << " blocks of " << stack->threads
         << " threads, B<=" << stack->maxBatch << ")";
      printTensorCores(os, stack->tensorCoresFromBatch, *persistent);
    }
  }
  os << "\n";
}

/// The products over all steps at once (`[T·B, K]` rows expanded to a
/// `[T, B, N]` sequence) made before `loop` and read by its body: layer 0's
/// input projections of a wavefront. A gate whose result the loop reads as
/// it is (a sequence computed some other way) is not one of them.
static unsigned countGemmsReadBy(scf::ForOp loop) {
  unsigned gemms = 0;
  llvm::SmallPtrSet<Operation *, 8> counted;
  loop.getBody()->walk([&](Operation *op) {
    for (Value operand : op->getOperands()) {
      auto expand = operand.getDefiningOp<tensor::ExpandShapeOp>();
      if (!expand || loop->isAncestor(expand))
        continue;
      Operation *def = expand.getSrc().getDefiningOp();
      if (!def || !counted.insert(def).second)
        continue;
      if (auto gate = dyn_cast<GateOp>(def))
        gemms += gate.getInputs().size();
    }
  });
  return gemms;
}

/// One line for a wavefront loop (from `lstm-wavefront`) of `layers` layers:
/// per diagonal, the batched GEMMs and pointwise kernels of its body (the
/// masks and copies that keep inactive layers' state each count one), the
/// products made before it for all steps, and the L + T - 1 sequential
/// diagonals.
static void printWavefront(raw_ostream &os, StringRef function, scf::ForOp loop,
                           int64_t layers,
                           const PersistentOptions *persistent) {
  StepKernels step = countStepKernels(*loop.getBody());
  auto direction = loop->getAttrOfType<StringAttr>(kWavefrontDirectionAttr);
  os << "@" << function << " wavefront of " << layers << " layers ("
     << (direction ? direction.getValue() : "forward")
     << "): gemms/step=" << step.gemms << " pointwise/step=" << step.pointwise
     << " hoisted-gemms=" << countGemmsReadBy(loop) << " steps=T+"
     << layers - 1;
  // A wavefront bounded by the batch size (lstm-wavefront's
  // side-output-max-product) is the then branch of an scf.if on it.
  if (auto bounded = dyn_cast<scf::IfOp>(loop->getParentOp());
      bounded && loop->getParentRegion() == &bounded.getThenRegion() &&
      !bounded->hasAttr(kPersistentStackAttr))
    if (auto cmp = bounded.getCondition().getDefiningOp<arith::CmpIOp>();
        cmp && cmp.getPredicate() == arith::CmpIPredicate::ule)
      if (std::optional<int64_t> most = getConstantIntValue(cmp.getRhs()))
        os << " where B<=" << *most << " (the layers above)";
  // lstm-to-persistent runs single layers: a stack it should run is
  // optimised without the wavefront, or (lstm-optimize{persistent=true})
  // kept as layers up to the kernels' batch, with the wavefront above it.
  if (persistent) {
    os << " persistent=no (a wavefront of layers";
    auto stack = dyn_cast<scf::IfOp>(loop->getParentOp());
    auto bound = stack && stack->hasAttr(kPersistentStackAttr) &&
                         loop->getParentRegion() == &stack.getElseRegion()
                     ? stack.getCondition().getDefiningOp<arith::CmpIOp>()
                     : nullptr;
    std::optional<int64_t> most =
        bound ? getConstantIntValue(bound.getRhs()) : std::nullopt;
    // Where lstm-to-persistent runs the layers kept below the bound as
    // kernels, its bound for them (on tensor cores, theirs).
    if (most) {
      SmallVector<LayerOp> kept(stack.thenBlock()->getOps<LayerOp>());
      if (int64_t kernels = chooseStackBranchBound(kept, *most, *persistent))
        most = kernels;
    }
    if (most)
      os << ", run where B>" << *most
         << ", the layers above where B<=" << *most;
    os << ")";
  }
  os << "\n";
}

namespace {
struct LSTMScheduleReportPass
    : lstm::impl::LSTMScheduleReportPassBase<LSTMScheduleReportPass> {
  using Base::Base;

  void runOnOperation() override {
    std::string error;
    std::unique_ptr<llvm::ToolOutputFile> file;
    raw_ostream *os = &llvm::errs();
    if (!outputFile.empty()) {
      file = openOutputFile(outputFile, &error);
      if (!file) {
        getOperation().emitError() << "lstm-schedule-report: " << error;
        return signalPassFailure();
      }
      os = &file->os();
    }

    // What lstm-to-nvvm{persistent=true} asks of lstm-to-persistent.
    std::optional<PersistentOptions> kernels;
    if (persistent)
      kernels = persistentOptionsForGpu(computeType, chip, tensorCores);

    // Layers and wavefront loops (which replace a stack of layers), in
    // program order.
    getOperation().walk([&](FunctionOpInterface function) {
      // The stacks lstm-to-persistent runs in one kernel, by layer.
      SmallVector<StackChoice> stacks;
      if (persistent) {
        SmallVector<LayerOp> layers;
        function.walk([&](LayerOp layer) { layers.push_back(layer); });
        stacks = chooseStacks(layers, *kernels);
      }
      DenseMap<Operation *, const StackChoice *> stackOf;
      for (const StackChoice &stack : stacks)
        for (LayerOp layer : stack.layers)
          stackOf[layer] = &stack;
      unsigned index = 0;
      DenseMap<const StackChoice *, unsigned> firstIndex;
      function.walk<WalkOrder::PreOrder>([&](Operation *op) {
        if (auto layer = dyn_cast<LayerOp>(op)) {
          const StackChoice *stack = stackOf.lookup(layer);
          if (stack)
            firstIndex.try_emplace(stack, index);
          printLayer(*os, function.getName(), index++, layer,
                     kernels ? &*kernels : nullptr, stack,
                     stack ? firstIndex.lookup(stack) : 0);
          return WalkResult::skip();
        }
        if (auto loop = dyn_cast<scf::ForOp>(op))
          if (auto layers =
                  loop->getAttrOfType<IntegerAttr>(kWavefrontLayersAttr)) {
            printWavefront(*os, function.getName(), loop, layers.getInt(),
                           kernels ? &*kernels : nullptr);
            index += layers.getInt();
            return WalkResult::skip();
          }
        return WalkResult::advance();
      });
    });
    os->flush();
    if (file)
      file->keep();
    markAllAnalysesPreserved();
  }
};
} // namespace
