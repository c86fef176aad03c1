//===- LSTMOps.td - Operations of the lstm dialect ---------*- tablegen -*-===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception

#ifndef LSTM_DIALECT_LSTM_IR_LSTMOPS_TD
#define LSTM_DIALECT_LSTM_IR_LSTMOPS_TD

include "lstm/Dialect/LSTM/IR/LSTMDialect.td"
include "mlir/IR/OpBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/LoopLikeInterface.td"

class LSTM_Op<string mnemonic, list<Trait> traits = []>
    : Op<LSTM_Dialect, mnemonic, traits>;

// Checks a layer's cell against the layer (LayerOp::verifyCell); listed
// before LoopLikeOpInterface so that its messages come first.
def LSTM_CellMatchesLayer : NativeOpTrait<"CellMatchesLayer"> {
  let cppNamespace = "::mlir::lstm";
}

// The float types that both lowerings compile (an f8 type has no LLVM
// arithmetic): f16, bf16, f32, f64.
def LSTM_Float : AnyTypeOf<[F16, BF16, F32, F64]>;
def LSTM_FloatTensor2D : 2DTensorOf<[AnyFloat]>;
def LSTM_FloatTensor1D : 1DTensorOf<[AnyFloat]>;
// A gate's per-row operands ([B, K], [H, K], [B, H]) or their batched form
// with a leading group extent L ([L, B, K], ...).
def LSTM_GateRowsTensor : TensorRankOf<[LSTM_Float], [2, 3]>;
// A gate's per-feature operands ([H]) or their batched form ([L, H]).
def LSTM_GateVectorTensor : TensorRankOf<[LSTM_Float], [1, 2]>;

//===----------------------------------------------------------------------===//
// LayerOp
//===----------------------------------------------------------------------===//

def LSTM_LayerOp : LSTM_Op<"layer", [
    RecursiveMemoryEffects, AttrSizedOperandSegments,
    AttrSizedResultSegments, SingleBlock, LSTM_CellMatchesLayer,
    DeclareOpInterfaceMethods<LoopLikeOpInterface, [
        "getRegionIterArgs", "getYieldedValuesMutable", "getLoopResults"]>,
    DeclareOpInterfaceMethods<ReifyRankedShapedTypeOpInterface,
                              ["reifyResultShapes"]>]> {
  let summary = "a recurrence over a [T, B, K] sequence with the cell as region";
  let description = [{
    Runs the cell held in the region once per time step. `ins` are sequences of
    shape `[T, B, K_i]`; at step `t` the region receives their slices `[B, K_i]`
    followed by the current recurrent state (the `init` values at the first
    step). The terminator `lstm.yield` returns the step's outputs and the new
    state. Each output `[B, N]` is stacked into a result `[T, B, N]`; the final
    state is returned after the outputs.

    `reverse` walks the sequence from `t = T - 1` down to `0`; outputs are still
    written at the step's own index.

    With `lengths` (one integer per batch row), steps `t >= lengths[b]` leave
    row `b`'s state unchanged and write zeros to its outputs: the semantics of
    PyTorch's packed sequences, in both directions. A length of 0 or less
    makes every step of its row padding, one of T or more none (PyTorch
    takes lengths in [1, T] only; the Python package refuses the others
    before a call).

    The region may use values defined above it (weights, biases). The op is
    a `LoopLikeOpInterface` (the cell is the loop body): upstream
    `--loop-invariant-code-motion` hoists the cell's work that depends on
    neither the step's slices nor the state (pure ops on weights and biases
    only) out of the recurrence, to run once instead of every step.

    Example:

    ```mlir
    %y, %hT = lstm.layer forward ins(%x : tensor<?x?x32xf32>)
        init(%h0 : tensor<?x64xf32>)
        -> (tensor<?x?x64xf32>), (tensor<?x64xf32>) {
    ^bb0(%xt: tensor<?x32xf32>, %h: tensor<?x64xf32>):
      %hn = lstm.gate tanh (%xt, %h : tensor<?x32xf32>, tensor<?x64xf32>)
          weights(%W, %R : tensor<64x32xf32>, tensor<64x64xf32>)
          bias(%b : tensor<64xf32>) -> tensor<?x64xf32>
      lstm.yield out(%hn : tensor<?x64xf32>) state(%hn : tensor<?x64xf32>)
    }
    ```
  }];

  let arguments = (ins
    LSTM_Direction:$direction,
    Variadic<3DTensorOf<[LSTM_Float]>>:$inputs,
    Variadic<AnyRankedTensor>:$inits,
    Optional<1DTensorOf<[I32, I64]>>:$lengths
  );
  let results = (outs
    Variadic<3DTensorOf<[LSTM_Float]>>:$outputs,
    Variadic<AnyRankedTensor>:$finals
  );
  let regions = (region SizedRegion<1>:$body);

  let assemblyFormat = [{
    $direction `ins` `(` $inputs `:` type($inputs) `)`
    `init` `(` $inits `:` type($inits) `)`
    (`lengths` `(` $lengths^ `:` type($lengths) `)`)?
    `->` custom<TypeListPair>(type($outputs), type($finals))
    attr-dict-with-keyword $body
  }];

  let extraClassDeclaration = [{
    /// The terminator of the cell.
    YieldOp getYield();
    /// Block arguments of the cell: the per-step input slices.
    Block::BlockArgListType getInputSlices() {
      return getBody().front().getArguments().take_front(getInputs().size());
    }
    /// Block arguments of the cell: the recurrent state.
    Block::BlockArgListType getStateArgs() {
      return getBody().front().getArguments().drop_front(getInputs().size());
    }
    bool isReverse() { return getDirection() == Direction::reverse; }
    /// The cell's arguments and yielded values against the layer's
    /// operands and results (see CellMatchesLayer).
    ::mlir::LogicalResult verifyCell();
  }];

  let hasVerifier = 1;
  // Output sequences that nothing reads and outputs that yield the same
  // value as another are dropped, outputs that yield whole columns of a
  // wider output become views of its sequence, and input sequences after
  // the first that the cell does not read are dropped.
  let hasCanonicalizer = 1;
}

//===----------------------------------------------------------------------===//
// YieldOp
//===----------------------------------------------------------------------===//

def LSTM_YieldOp : LSTM_Op<"yield", [
    Pure, Terminator, ReturnLike, HasParent<"LayerOp">,
    AttrSizedOperandSegments]> {
  let summary = "terminates a cell: the step's outputs and the new state";
  let description = [{
    Returns the outputs of one step (each `[B, N]`, stacked by the enclosing
    `lstm.layer` into `[T, B, N]`) and the new recurrent state, whose types
    must equal the layer's `init` types.

    ```mlir
    lstm.yield out(%h : tensor<?x64xf32>) state(%h, %c : tensor<?x64xf32>, tensor<?x64xf32>)
    ```
  }];
  let arguments = (ins Variadic<AnyRankedTensor>:$outputs,
                       Variadic<AnyRankedTensor>:$state);
  let assemblyFormat = [{
    (`out` `(` $outputs^ `:` type($outputs) `)`)?
    `state` `(` $state `:` type($state) `)` attr-dict
  }];
}

//===----------------------------------------------------------------------===//
// GateOp
//===----------------------------------------------------------------------===//

def LSTM_GateOp : LSTM_Op<"gate", [Pure, AttrSizedOperandSegments]> {
  let summary = "activation of a sum of matrix products, addends, biases and a peephole";
  let description = [{
    Computes

        act(sum_k inputs[k] · weights[k]^T + sum_a addends[a] + sum_j biases[j]
            + peephole ⊙ state)

    where each `inputs[k]` is `[B, K_k]`, each `weights[k]` is `[H, K_k]`
    (PyTorch's layout: rows are output features), each addend is a
    precomputed `[B, H]` term, each bias is `[H]`, and the optional peephole
    is a weight `[H]` applied elementwise to a `[B, H]` state (typically the
    cell state). The result is `[B, H]`. A gate needs at least one matrix
    product, addend or peephole term; with no products, the
    `(inputs) weights(...)` part is left out. (`lstm.gate identity
    peephole(%p, %x : ...)` is `p ⊙ x`, a vector broadcast along the
    batch: the backward pass scales cotangents by peephole weights so.)

    Addends are how `lstm-combine-gate-gemms` hands each gate its columns of
    a combined GEMM: the products move out of the gate, their sum comes back
    as an addend.

    `act` is one of `sigmoid`, `tanh`, `relu`, `identity`; with `identity` the
    op is a plain affine map, which is how a cell spells a projection.

    **Batched form.** With a result of rank 3, the gate computes L
    independent gates at once (the cells of one wavefront diagonal, see
    `lstm-wavefront`): every operand gains a leading extent L, so inputs are
    `[L, B, K_k]`, weights `[L, H, K_k]`, addends and the peephole state
    `[L, B, H]`, biases and the peephole weight `[L, H]`, and group `l` of
    the result is the gate above on group `l` of every operand. The lowering
    turns each product into one `linalg.batch_matmul`. All operands of one
    gate are of the same form.

    Keeping the matrix products explicit is what lets passes combine the
    products of several gates that share an operand into one GEMM.

    ```mlir
    %i = lstm.gate sigmoid (%xt, %h : tensor<?x64xf32>, tensor<?x128xf32>)
        weights(%Wi, %Ri : tensor<128x64xf32>, tensor<128x128xf32>)
        bias(%bi : tensor<128xf32>)
        peephole(%pi, %c : tensor<128xf32>, tensor<?x128xf32>)
        -> tensor<?x128xf32>
    %f = lstm.gate sigmoid add(%xf, %hf : tensor<?x128xf32>, tensor<?x128xf32>)
        bias(%bf : tensor<128xf32>) -> tensor<?x128xf32>
    // Three layers' gates at once.
    %g = lstm.gate tanh (%x3, %h3 : tensor<3x?x128xf32>, tensor<3x?x128xf32>)
        weights(%W3, %R3 : tensor<3x128x128xf32>, tensor<3x128x128xf32>)
        bias(%b3 : tensor<3x128xf32>) -> tensor<3x?x128xf32>
    ```
  }];

  let arguments = (ins
    LSTM_Activation:$activation,
    Variadic<LSTM_GateRowsTensor>:$inputs,
    Variadic<LSTM_GateRowsTensor>:$weights,
    Variadic<LSTM_GateRowsTensor>:$addends,
    Variadic<LSTM_GateVectorTensor>:$biases,
    Optional<LSTM_GateVectorTensor>:$peephole,
    Optional<LSTM_GateRowsTensor>:$peepholeState
  );
  let results = (outs LSTM_GateRowsTensor:$result);

  let assemblyFormat = [{
    $activation (`(` $inputs^ `:` type($inputs) `)`
                 `weights` `(` $weights `:` type($weights) `)`)?
    (`add` `(` $addends^ `:` type($addends) `)`)?
    (`bias` `(` $biases^ `:` type($biases) `)`)?
    (`peephole` `(` $peephole^ `,` $peepholeState `:` type($peephole) `,`
                    type($peepholeState) `)`)?
    attr-dict `->` type($result)
  }];

  let extraClassDeclaration = [{
    /// Whether this is the batched form (a result of rank 3).
    bool isBatched() {
      return cast<RankedTensorType>(getResult().getType()).getRank() == 3;
    }
  }];

  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// OneMinusOp
//===----------------------------------------------------------------------===//

def LSTM_OneMinusOp : LSTM_Op<"one_minus", [
    Pure, Elementwise, SameOperandsAndResultType]> {
  let summary = "elementwise 1 - x";
  let description = [{
    Computes `1 - x` elementwise: the complement of a gate, as in coupled
    input/forget gates (`f = 1 - i`) and GRU updates (`(1 - z) ⊙ n`). It exists
    because a splat constant of a tensor with a dynamic batch size cannot be
    written with `arith.constant`.

    ```mlir
    %f = lstm.one_minus %i : tensor<?x128xf32>
    ```
  }];
  let arguments = (ins RankedTensorOf<[LSTM_Float]>:$input);
  let results = (outs RankedTensorOf<[LSTM_Float]>:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
}

//===----------------------------------------------------------------------===//
// PointwiseOp
//===----------------------------------------------------------------------===//

def LSTM_PointwiseInput : TensorRankOf<[AnyType], [1, 2, 3]>;

def LSTM_PointwiseOp : LSTM_Op<"pointwise", [
    Pure, IsolatedFromAbove, SingleBlock]> {
  let summary = "a fused region of scalar work applied to every element of [B, N] or [L, B, N]";
  let description = [{
    Applies the scalar computation held in the region to every element
    `(b, n)` of a `[B, N]` iteration space, in one pass over the data: the
    fused pointwise work of one step of a cell (bias adds, peepholes,
    activations, `1 - x`, the cell update, the output), as produced by
    `lstm-fuse-elementwise`. The lowering turns each `lstm.pointwise` into
    exactly one `linalg.generic`, and so the GPU pipeline into one kernel.

    Operands are read at `(b, n)`:

    - a rank-2 operand `[B, N]` is read at `[b, n]` (gate pre-activations,
      states, slices of a combined GEMM: a `tensor.extract_slice` of a wider
      `[B, M]` tensor becomes a strided view after bufferization, not a copy);
    - a rank-1 operand `[N]` (a bias, a peephole weight) is read at `[n]`,
      broadcast along the batch.

    The region has one block argument per operand, of the operand's element
    type, and computes with side-effect-free scalar ops (`arith`, `math`);
    `lstm.pointwise_yield` returns one scalar per result, which is written at
    `[b, n]` of the corresponding `[B, N]` result. The region is isolated
    from above: constants it needs are defined inside it.

    The batched cell of a wavefront (`lstm-wavefront`) runs the same region
    over `[L, B, N]`, one `[B, N]` slice per layer: results and full
    operands are then `[L, B, N]` and broadcast operands `[L, N]` (each
    layer's own bias), read at `[l, b, n]` and `[l, n]`.

    All full operands and results agree on their shape, broadcast operands on
    it without the batch extent (dynamic extents are compared at run time by
    the lowering). At least one operand has the results' rank, so that the
    batch extent is known.

    ```mlir
    %c, %h = lstm.pointwise ins(%i, %g, %f, %cp, %o : tensor<?x128xf32>, tensor<?x128xf32>, tensor<?x128xf32>, tensor<?x128xf32>, tensor<?x128xf32>)
        -> tensor<?x128xf32>, tensor<?x128xf32> {
    ^bb0(%vi: f32, %vg: f32, %vf: f32, %vc: f32, %vo: f32):
      %ig = arith.mulf %vi, %vg : f32
      %fc = arith.mulf %vf, %vc : f32
      %cn = arith.addf %fc, %ig : f32
      %t = math.tanh %cn : f32
      %hn = arith.mulf %vo, %t : f32
      lstm.pointwise_yield %cn, %hn : f32, f32
    }
    ```
  }];

  let arguments = (ins Variadic<LSTM_PointwiseInput>:$inputs);
  let results = (outs Variadic<TensorRankOf<[AnyType], [2, 3]>>:$results);
  let regions = (region SizedRegion<1>:$body);

  let assemblyFormat = [{
    `ins` `(` $inputs `:` type($inputs) `)` `->` type($results)
    attr-dict-with-keyword $body
  }];

  let extraClassDeclaration = [{
    /// The terminator of the region.
    PointwiseYieldOp getYield();
  }];

  let hasVerifier = 1;
  let hasRegionVerifier = 1;
}

def LSTM_PointwiseYieldOp : LSTM_Op<"pointwise_yield", [
    Pure, Terminator, ReturnLike, HasParent<"PointwiseOp">]> {
  let summary = "terminates an lstm.pointwise region: one scalar per result";
  let description = [{
    Returns the scalar value of each result of the enclosing `lstm.pointwise`
    at the current element; the types are the results' element types.

    ```mlir
    lstm.pointwise_yield %c, %h : f32, f32
    ```
  }];
  let arguments = (ins Variadic<AnyType>:$values);
  let assemblyFormat = "$values attr-dict `:` type($values)";
}

//===----------------------------------------------------------------------===//
// GridBarrierOp
//===----------------------------------------------------------------------===//

def LSTM_GridBarrierOp : LSTM_Op<"grid_barrier", [
    MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "a barrier of every thread of a GPU grid (persistent kernels)";
  let description = [{
    Inside a GPU kernel whose blocks are all resident at once (launched
    cooperatively: `lstm-to-persistent`'s kernels are), waits until every
    thread of the grid has reached barrier number `ordinal` (1, 2, ...) of
    the kernel; every memory write made before it by any thread is visible
    to every thread after it. `counter` is a zero-initialised device word
    that the kernel's barriers count arrivals on (barrier `k` waits for
    `k` times the number of blocks, which must fit in 31 bits), so it is
    used by one launch only.

    Upstream's `gpu` dialect synchronises a block (`gpu.barrier`) but has no
    grid-wide barrier: `lstm-lower-grid-barriers` expands this op into a
    block barrier, one thread's fenced atomic arrival and wait on
    `counter`, and a second block barrier.

    ```mlir
    lstm.grid_barrier %counter[%k] : memref<1xi32>
    ```
  }];
  let arguments = (ins MemRefOf<[I32]>:$counter, Index:$ordinal);
  let assemblyFormat = "$counter `[` $ordinal `]` attr-dict `:` type($counter)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// BlockBarrierOp
//===----------------------------------------------------------------------===//

def LSTM_BlockBarrierOp : LSTM_Op<"block_barrier", [
    MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "a barrier of the threads of a GPU block (persistent kernels)";
  let description = [{
    `gpu.barrier`, with the memory effects it has: every thread of the block
    waits for the others, and the writes made before it (to shared or
    global memory) are visible to the block's threads after it.

    `gpu.barrier` declares no memory effects in MLIR 22, and the ownership-
    based buffer deallocation, which runs on the host code while the
    kernels are still inside it, rejects an op with unknown effects;
    `lstm-to-persistent` therefore builds this op, and
    `lstm-lower-grid-barriers` turns it into `gpu.barrier`.

    With `wait_async_copies`, each thread first waits for the asynchronous
    copies to shared memory it has started (`nvgpu.device_async_copy`,
    cp.async): the barrier then makes all the block's copies visible to its
    threads. The wait becomes `nvgpu.device_async_create_group` and
    `nvgpu.device_async_wait`, which declare no memory effects either.

    ```mlir
    lstm.block_barrier
    lstm.block_barrier wait_async_copies
    ```
  }];
  let arguments = (ins UnitAttr:$waitAsyncCopies);
  let assemblyFormat = "(`wait_async_copies` $waitAsyncCopies^)? attr-dict";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// WarpBarrierOp
//===----------------------------------------------------------------------===//

def LSTM_WarpBarrierOp : LSTM_Op<"warp_barrier", [
    MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "a barrier of the threads of a warp (persistent kernels)";
  let description = [{
    Every thread of the warp waits for the others, and the writes made
    before it (to shared or global memory) are visible to the warp's
    threads after it: `nvvm.bar.warp.sync` with every lane in its mask
    (CUDA's `__syncwarp()`), which declares no memory effects in MLIR 22
    (see `lstm.block_barrier` for why that matters).
    `lstm-lower-grid-barriers` turns it into that op. Every lane of the
    warp must reach it.

    ```mlir
    lstm.warp_barrier
    ```
  }];
  let assemblyFormat = "attr-dict";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// WarpsBarrierOp
//===----------------------------------------------------------------------===//

def LSTM_WarpsBarrierOp : LSTM_Op<"warps_barrier", [
    MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "a barrier of some warps of a GPU block (persistent kernels)";
  let description = [{
    The `warps` warps of the block that reach the barrier numbered `id`
    wait for each other, and the writes each made before it (to shared or
    global memory) are visible to the others after it: PTX's named barrier
    (`bar.sync id, 32 · warps`; CUDA has no intrinsic for it). Barrier 0 is
    the block's (`gpu.barrier`), so `id` is 1 to 15. Every lane of exactly
    `warps` warps must reach it, each time it is used.

    A persistent kernel's warps that split a tensor-core tile's depth meet
    at it: each has written its partial tile to shared memory, and one of
    them sums the partials. `lstm-lower-grid-barriers` turns it into
    `nvvm.barrier`, which declares no memory effects in MLIR 22 (see
    `lstm.block_barrier` for why that matters).

    ```mlir
    lstm.warps_barrier %id warps 4 : i32
    ```
  }];
  let arguments = (ins I32:$id,
                       ConfinedAttr<I64Attr, [IntMinValue<1>, IntMaxValue<32>]>:$warps);
  let assemblyFormat = "$id `warps` $warps attr-dict `:` type($id)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// WarpMmaOp
//===----------------------------------------------------------------------===//

def LSTM_WarpMmaOp : LSTM_Op<"warp_mma", [Pure, AttrSizedOperandSegments]> {
  let summary = "one tensor-core instruction of a warp: a 16x8 tile += A · B";
  let description = [{
    A warp's `mma.sync` of a 16 × 8 fp32 accumulator tile (persistent
    kernels, sm_80 and later): each lane gives its four registers of A
    (16 × K, row-major), its two of B (K × 8, column-major) and its four
    elements of the accumulator, and gets its four of the result, in PTX's
    fragment layouts. Without `bf16`, K = 8 and A and B are TF32 values as
    the bits of fp32 ones (the instruction reads their upper 19 bits); with
    `bf16`, K = 16 and each register holds two bf16 values, the first in
    its lower half.

    `nvgpu.mma.sync` takes no bf16 operands in MLIR 22 and `nvvm.mma.sync`
    declares no memory effects; `lstm-lower-grid-barriers` turns this op
    into the latter.

    ```mlir
    %d:4 = lstm.warp_mma [%a0, %a1, %a2, %a3] [%b0, %b1] [%c0, %c1, %c2, %c3]
    %e:4 = lstm.warp_mma [%a0, %a1, %a2, %a3] [%b0, %b1] [%c0, %c1, %c2, %c3] bf16
    ```
  }];
  let arguments = (ins Variadic<I32>:$a, Variadic<I32>:$b, Variadic<F32>:$c,
                       UnitAttr:$bf16);
  let results = (outs F32:$d0, F32:$d1, F32:$d2, F32:$d3);
  let assemblyFormat = [{
    `[` $a `]` `[` $b `]` `[` $c `]` (`bf16` $bf16^)? attr-dict
  }];
  let hasVerifier = 1;
}

#endif // LSTM_DIALECT_LSTM_IR_LSTMOPS_TD
