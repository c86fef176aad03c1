//===- TestTransforms.cpp - The rewrite entry points under a listener -----===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Calls the entry points of Transforms.h from outside the library, the way a
// pattern or a transform op would, with a listener on the rewriter. For each
// call it prints what the listener was told and what changed without it
// telling: an op that appeared without an insertion, one that disappeared
// without an erasure, or one whose operands, attributes or result types
// differ from what they were at its last insertion or modification. The last
// three must be 0, or a greedy driver (which relies on the notifications to
// revisit ops) would miss work.
//
// A module pass that visits the functions in order: as a function pass, the
// pass manager would run it on several functions at once, and their reports
// would interleave (llvm::outs() is not thread-safe) in no fixed order.
//
//===----------------------------------------------------------------------===//

#include "lstm/Dialect/LSTM/IR/LSTMOps.h"
#include "lstm/Dialect/LSTM/Transforms/Transforms.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/Pass.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

using namespace mlir;
using namespace mlir::lstm;

namespace {

/// What an op is, for telling whether it changed: its operands, attributes
/// and result types.
struct OpSignature {
  SmallVector<Value> operands;
  DictionaryAttr attributes;
  SmallVector<Type> resultTypes;

  explicit OpSignature(Operation *op)
      : operands(op->getOperands()), attributes(op->getAttrDictionary()),
        resultTypes(op->getResultTypes()) {}
  bool operator==(const OpSignature &other) const {
    return operands == other.operands && attributes == other.attributes &&
           resultTypes == other.resultTypes;
  }
};

/// Counts the notifications of a rewriter and remembers what each op was
/// when it was last inserted or modified.
struct CountingListener : RewriterBase::Listener {
  void notifyOperationInserted(Operation *op,
                               OpBuilder::InsertPoint previous) override {
    ++numInserted;
    lastNotified.insert_or_assign(op, OpSignature(op));
  }
  void notifyOperationModified(Operation *op) override {
    ++numModified;
    lastNotified.insert_or_assign(op, OpSignature(op));
  }
  void notifyOperationReplaced(Operation *op, ValueRange) override {
    ++numReplaced;
  }
  void notifyOperationErased(Operation *op) override {
    ++numErased;
    erased.insert(op);
  }

  unsigned numInserted = 0, numModified = 0, numReplaced = 0, numErased = 0;
  llvm::DenseSet<Operation *> erased;
  llvm::DenseMap<Operation *, OpSignature> lastNotified;
};

/// Every op under `root` (itself excluded) with its signature.
static llvm::DenseMap<Operation *, OpSignature> snapshot(Operation *root) {
  llvm::DenseMap<Operation *, OpSignature> ops;
  root->walk([&](Operation *op) {
    if (op != root)
      ops.try_emplace(op, op);
  });
  return ops;
}

struct TestLSTMTransformsPass
    : PassWrapper<TestLSTMTransformsPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(TestLSTMTransformsPass)

  TestLSTMTransformsPass() = default;
  TestLSTMTransformsPass(const TestLSTMTransformsPass &other)
      : PassWrapper(other) {}

  StringRef getArgument() const final { return "test-lstm-transforms"; }
  StringRef getDescription() const final {
    return "Runs an entry point of lstm/Dialect/LSTM/Transforms/Transforms.h "
           "on every layer with a listener, and prints what it was told";
  }

  Option<std::string> entryPoint{
      *this, "entry-point",
      llvm::cl::desc("combineGateGemms, hoistInputProjections, "
                     "fuseElementwise (on every layer) or wavefrontLayers "
                     "(on every chain of layers)")};

  void runOnOperation() override {
    if (entryPoint != "combineGateGemms" &&
        entryPoint != "hoistInputProjections" &&
        entryPoint != "fuseElementwise" && entryPoint != "wavefrontLayers") {
      getOperation().emitError("test-lstm-transforms: unknown entry-point '")
          << entryPoint << "'";
      return signalPassFailure();
    }
    for (auto func : getOperation().getOps<func::FuncOp>())
      runOnFunction(func);
  }

  void runOnFunction(func::FuncOp func) {
    if (entryPoint == "wavefrontLayers") {
      for (SmallVector<LayerOp> &chain : findLayerChains(func)) {
        CountingListener listener;
        IRRewriter rewriter(&getContext(), &listener);
        llvm::DenseMap<Operation *, OpSignature> before = snapshot(func);
        LogicalResult result = wavefrontLayers(rewriter, chain);
        report(func, before, listener, result);
      }
      return;
    }
    SmallVector<LayerOp> layers;
    func.walk([&](LayerOp layer) { layers.push_back(layer); });
    for (LayerOp layer : layers) {
      CountingListener listener;
      IRRewriter rewriter(&getContext(), &listener);
      llvm::DenseMap<Operation *, OpSignature> before = snapshot(func);
      LogicalResult result = failure();
      if (entryPoint == "combineGateGemms")
        result = combineGateGemms(rewriter, layer);
      else if (entryPoint == "hoistInputProjections")
        result = hoistInputProjections(rewriter, layer);
      else
        result = fuseElementwise(rewriter, layer.getBody().front());
      report(func, before, listener, result);
    }
  }

  /// Prints the notifications and the changes that none reported.
  void report(func::FuncOp func,
              const llvm::DenseMap<Operation *, OpSignature> &before,
              const CountingListener &listener, LogicalResult result) {
    llvm::DenseMap<Operation *, OpSignature> after = snapshot(func);
    unsigned unreportedInsertions = 0, unreportedErasures = 0,
             unreportedModifications = 0;
    for (const auto &[op, signature] : after) {
      // What the op should be: as the listener last saw it, else as before.
      auto expected = listener.lastNotified.find(op);
      if (expected == listener.lastNotified.end()) {
        expected = before.find(op);
        if (expected == before.end()) {
          ++unreportedInsertions;
          continue;
        }
      }
      if (!(expected->second == signature))
        ++unreportedModifications;
    }
    for (const auto &entry : before)
      if (!after.contains(entry.first))
        unreportedErasures += !listener.erased.contains(entry.first);
    llvm::outs() << "@" << func.getSymName() << " " << entryPoint << ": "
                 << (succeeded(result) ? "success" : "failure") << "; "
                 << listener.numInserted << " inserted, "
                 << listener.numModified << " modified, "
                 << listener.numReplaced << " replaced, " << listener.numErased
                 << " erased; unreported: " << unreportedInsertions
                 << " insertions, " << unreportedErasures << " erasures, "
                 << unreportedModifications << " modifications\n";
  }
};

} // namespace

namespace mlir::lstm::test {
void registerTestLSTMTransformsPass() {
  PassRegistration<TestLSTMTransformsPass>();
}
} // namespace mlir::lstm::test
