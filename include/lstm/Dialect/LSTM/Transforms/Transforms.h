//===- Transforms.h - Rewrites of the lstm dialect as functions -*- C++ -*-===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The cores of the lstm-to-lstm passes, callable from other passes, patterns
// and tools. Like upstream's linalg::fuseElementwiseOps, each takes the
// rewriter that makes its changes, so that a listener attached to it (a
// greedy driver, a transform interpreter, a test) sees every op created,
// modified, replaced or erased. The passes walk the IR, pick the candidates
// and call these with an IRRewriter. Like the passes, callers replace the
// layers that statically run no step first (replaceEmptyLayer,
// EmptyLayers.h): the IR these functions would build for them is rejected
// by upstream's verifiers.
//
//===----------------------------------------------------------------------===//

#ifndef LSTM_DIALECT_LSTM_TRANSFORMS_TRANSFORMS_H
#define LSTM_DIALECT_LSTM_TRANSFORMS_TRANSFORMS_H

#include "lstm/Dialect/LSTM/IR/LSTMOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"

#include <limits>

namespace mlir::lstm {

/// Combines, in `layer`'s cell, the matrix products of different gates that
/// multiply the same operand into one GEMM against their weights stacked
/// before the layer (lstm-combine-gate-gemms); each gate takes its columns of
/// the combined product as an addend. Only products whose weight is defined
/// above the layer take part, in groups spanning at least two gates. Fails,
/// changing nothing, when the cell has no such group.
LogicalResult combineGateGemms(RewriterBase &rewriter, LayerOp layer);

/// Moves the input projections of `layer`'s cell (products of a step's input
/// slice with a weight defined above the layer) before the layer, as one GEMM
/// over all T·B rows per group of products on the same input
/// (lstm-hoist-input-projection). The projected sequence becomes a new `ins`
/// sequence whose step slice the gates take as an addend; biases move into
/// the hoisted GEMM where that changes no rounding. Gates left as a bare
/// `identity` of one addend are replaced by it, and `ins` sequences the cell
/// no longer reads are dropped (keeping one). Fails, changing nothing, when
/// the cell has no input projection.
LogicalResult hoistInputProjections(RewriterBase &rewriter, LayerOp layer);

/// Fuses `group`, pointwise ops of one cell in block order (a group of
/// PointwiseGroups), into one `lstm.pointwise` whose region is the scalar
/// code of all of them. A gate with matrix products keeps them as an
/// `identity` gate of the products alone, where the gate was; its epilogue
/// joins the region. The new op is placed where the last member was, so the
/// cell may need reordering afterwards (fuseElementwise does it). Returns the
/// new op, or a null op when no result of the group is used outside it (the
/// group is then erased as dead). Fails, changing nothing, for a group of
/// fewer than two ops (one op already lowers to one linalg.generic) other
/// than a lone gate with matrix products and an epilogue, which is split.
FailureOr<PointwiseOp> fusePointwiseGroup(RewriterBase &rewriter,
                                          ArrayRef<Operation *> group);

/// Fuses every group of pointwise work of `cell` (the body of an
/// `lstm.layer`, or of the loop `lstm-wavefront` makes of a chain of layers)
/// with fusePointwiseGroup, then moves the other ops of the cell behind the
/// values they read, keeping their order otherwise (lstm-fuse-elementwise).
/// Fails when the reordered cell would have a cycle, which the grouping
/// rules out on a verified cell.
LogicalResult fuseElementwise(RewriterBase &rewriter, Block &cell);

//===----------------------------------------------------------------------===//
// Layer-time wavefront (lstm-wavefront)
//===----------------------------------------------------------------------===//

/// The maximal chains of at least two layers under `root` in which an
/// output of each layer is the next layer's only input (and no other
/// layer's only input), in order, the first layer of a chain first. The
/// layers' outputs may be read elsewhere too.
SmallVector<SmallVector<LayerOp>> findLayerChains(Operation *root);

/// Runs the stacked `layers` (a chain as findLayerChains returns one) as one
/// `scf.for` over their L + T - 1 diagonals, each running all layers' cells
/// as one batched cell (see the lstm-wavefront pass), and erases them.
/// Fails, leaving the IR as it was, when the cells cannot be batched (they
/// differ in structure, a layer has lengths, ...; the reason is printed
/// under -debug-only=lstm-wavefront). Returns the loop.
FailureOr<scf::ForOp> wavefrontLayers(RewriterBase &rewriter,
                                      ArrayRef<LayerOp> layers);

/// The largest batch size at which lstm-to-persistent's cost model (with
/// its default options) runs every one of `layers` as a persistent kernel,
/// judged on each layer as `lstm-optimize{wavefront=false}` leaves it
/// (input projections hoisted, pointwise work fused); 0 if some layer runs
/// at no batch size. Changes nothing.
int64_t persistentStackMaxBatch(ArrayRef<LayerOp> layers);

/// Runs the chain `layers` as a wavefront (wavefrontLayers) only where the
/// batch size is above `maxBatch`: the ops from the first layer to the last
/// move into the else branch of an `scf.if` on the batch size, where they
/// become the wavefront loop, and a copy of them, layers left as they are,
/// into the then branch. With `wavefrontUpTo`, the else branch runs the
/// wavefront only up to that batch size (wavefrontUpToBatch) and the layers
/// above it. Fails, changing nothing, where wavefrontLayers would. Returns
/// the scf.if.
FailureOr<scf::IfOp> wavefrontAboveBatch(
    RewriterBase &rewriter, ArrayRef<LayerOp> layers, int64_t maxBatch,
    int64_t wavefrontUpTo = std::numeric_limits<int64_t>::max());

/// The converse: the chain runs as a wavefront only where the batch size is
/// at most `maxBatch` (the then branch of an `scf.if` on it holds the loop,
/// the else branch the layers as they are). Fails, changing nothing, where
/// wavefrontLayers would. Returns the scf.if.
FailureOr<scf::IfOp> wavefrontUpToBatch(RewriterBase &rewriter,
                                        ArrayRef<LayerOp> layers,
                                        int64_t maxBatch);

/// Where one branch of `choice` yields views (static offsets, unit strides)
/// of a tensor it computes, e.g. the wavefront's stored outputs, each
/// layer's sequence a slice of one `[L, L+T-1, B, N]` tensor: the if yields
/// the whole tensor and the views are taken after it, the other branch
/// inserting what it yielded into a tensor of the same type. Through the
/// if's result a view's strides would be dynamic (the branches' layouts
/// differ): bufferization then copied each sequence, in the branch or where
/// a product collapses it, where a view of the whole tensor collapses in
/// place (lstm-collapse-before-slice). Views that may overlap are left as
/// they are. Returns the if that replaces `choice`, or `choice`.
scf::IfOp yieldWholeTensorsOfViews(RewriterBase &rewriter, scf::IfOp choice);

/// The largest batch size at which the wavefront of the chain `layers`
/// pays, as lstm-wavefront judges it (`maxProductSize` is its option
/// `side-output-max-product`): unbounded (INT64_MAX) for a chain that stores
/// no outputs; for one that does, the batch at which a layer's largest
/// per-step product, B·N·K multiply-adds, reaches `maxProductSize`. 0 when
/// the chain is no wavefront at all.
int64_t wavefrontMaxBatch(ArrayRef<LayerOp> layers, int64_t maxProductSize);

} // namespace mlir::lstm

#endif // LSTM_DIALECT_LSTM_TRANSFORMS_TRANSFORMS_H
