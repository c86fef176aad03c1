//===- Passes.td - Rewrites of the lstm dialect ------------*- tablegen -*-===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception

#ifndef LSTM_DIALECT_LSTM_TRANSFORMS_PASSES_TD
#define LSTM_DIALECT_LSTM_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def LSTMCombineGateGemmsPass : Pass<"lstm-combine-gate-gemms"> {
  let summary = "Combine the gate GEMMs that share an operand into one GEMM";
  let description = [{
    In every `lstm.layer`, the matrix products of different gates that
    multiply the same SSA operand (typically `x_t` and `h_{t-1}`) become one
    GEMM against the gates' weights stacked along the rows: an LSTM's eight
    per-step products become two.

    For each such group, the weights are stacked with `tensor.concat dim(0)`
    right before the layer, so the packing runs once per call and not once
    per step (with constant weights, it is left to the folders). Weights that
    are, in order, adjacent row blocks of one tensor (the per-gate slices of
    nn.LSTM's stacked `weight_hh`) are not copied: the packed weight is that
    tensor, or one slice of it. Inside the
    cell, `lstm.gate identity (%operand) weights(%packed)` computes the
    combined `[B, G·H]` product before the first gate of the group, and each
    gate receives its `[B, H]` columns (`tensor.extract_slice`) as an addend
    in place of its product.

    Which products combine is decided by the dependence analysis of the cell
    (`CellDependence`), not by the name of the cell: products on different
    operands never combine, so a recurrent product whose operand depends on
    another gate (Cho's GRU and MGU multiply `r ⊙ h`, FGR's gate-to-gate
    terms read the previous activations) stays with its own operand group.
    Products are left alone when their weight is defined inside the cell
    (it could not be packed outside the time loop), has a dynamic shape, or
    when fewer than two gates multiply the operand.

    Example (two gates on `%h`):

    ```mlir
    %i = lstm.gate sigmoid (%h : tensor<?x8xf32>) weights(%Ri : tensor<8x8xf32>) -> tensor<?x8xf32>
    %f = lstm.gate sigmoid (%h : tensor<?x8xf32>) weights(%Rf : tensor<8x8xf32>) -> tensor<?x8xf32>
    ```

    becomes, with `%R = tensor.concat dim(0) %Ri, %Rf` before the layer,

    ```mlir
    %if = lstm.gate identity(%h : tensor<?x8xf32>) weights(%R : tensor<16x8xf32>) -> tensor<?x16xf32>
    %pi = tensor.extract_slice %if[0, 0] [%b, 8] [1, 1] : tensor<?x16xf32> to tensor<?x8xf32>
    %i = lstm.gate sigmoid add(%pi : tensor<?x8xf32>) -> tensor<?x8xf32>
    %pf = tensor.extract_slice %if[0, 8] [%b, 8] [1, 1] : tensor<?x16xf32> to tensor<?x8xf32>
    %f = lstm.gate sigmoid add(%pf : tensor<?x8xf32>) -> tensor<?x8xf32>
    ```
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::cf::ControlFlowDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

def LSTMFuseElementwisePass : Pass<"lstm-fuse-elementwise"> {
  let summary = "Fuse the pointwise work of each step between GEMMs into lstm.pointwise ops";
  let description = [{
    In every `lstm.layer`, the pointwise work of a step (gates without
    matrix products, the epilogue of gates with products: addends, biases,
    peephole and activation; `lstm.one_minus`; elementwise `arith`/`math` on
    `[B, N]` tensors: the cell update, the output) becomes as few
    `lstm.pointwise` ops as the GEMMs between them allow, each lowered to one
    `linalg.generic` and, on the GPU, one kernel per step. The batched cell
    of a wavefront loop (`lstm-wavefront`, which runs first in
    `lstm-optimize`) is fused the same way, on `[L, B, N]`: one kernel per
    diagonal for all of its layers.

    The groups come from `PointwiseGroups` (in the cell dependence analysis,
    `lstm/Dialect/LSTM/Analysis/CellDependence.h`): work joins the earliest
    group that all of its operands are available to, and a GEMM that reads
    a group's result splits what depends on it into a later group. An LSTM,
    a peephole LSTM (whose output gate peeps at the new `c_t`: the region
    computes `c_t` first), a GRU or FGR has one group per step; Cho's GRU
    and MGU, whose GEMM `R_n (r ⊙ h)` (`R_n (f ⊙ h)`) reads pointwise work of
    the same step, have two. Work whose results only feed a later group is
    computed in that group (Cho's GRU computes `1 - z` and `z ⊙ h` after the
    GEMM, and passes on nothing but `r ⊙ h`). A gate with
    products keeps them as an `lstm.gate identity` GEMM (only the products)
    where the gate was; its epilogue joins the group. A group of one op is
    left as it is (it lowers to one `linalg.generic` already), except a gate
    with products and an epilogue (an Elman RNN's cell): it is split so, which
    lowers to the same GEMM and elementwise kernel and is the form
    `lstm-to-persistent` runs. Inside the region the
    work runs in block order, so in-cell dependences are respected; the
    cell's other ops are then put in dependence order around the new ops.

    Each `lstm.pointwise` takes as operands the tensors its work reads from
    outside the group: `[B, N]` values (block arguments, GEMM results, the
    step slice of an input) and `[N]` biases and peephole weights, read with
    broadcasting. Splat constants become scalar constants of the region. The
    columns that `lstm-combine-gate-gemms` gives each gate
    (`tensor.extract_slice` of the combined GEMM) stay operands: one-shot
    bufferization turns them into strided views of the GEMM result, so the
    fused kernel reads the GEMM's output in place, without a copy and
    without the op having to know column offsets. Its results are the
    values used after the group (the yield, later GEMMs).

    A group of a single op is left alone (it already lowers to one
    `linalg.generic`). Length masking (`lengths` on the layer) is applied
    by the lowering of `lstm.layer` to the yielded values, after the fused
    op: it is a separate `linalg.generic` per masked value, not part of the
    fused kernel.

    Run it after `lstm-combine-gate-gemms` (which needs the products inside
    the gates) or alone; it accepts any cell.

    Example (the LSTM after combining):

    ```mlir
    %i = lstm.gate sigmoid add(%xi, %hi : ...) bias(%bi : tensor<8xf32>) -> tensor<?x8xf32>
    ...
    %c_new = arith.addf %fc, %ig : tensor<?x8xf32>
    %h_new = arith.mulf %o, %tanh_c : tensor<?x8xf32>
    ```

    becomes

    ```mlir
    %r:2 = lstm.pointwise ins(%xi, %hi, %bi, ... : tensor<?x8xf32>, tensor<?x8xf32>, tensor<8xf32>, ...)
        -> tensor<?x8xf32>, tensor<?x8xf32> {
    ^bb0(%a: f32, %b: f32, %c: f32, ...):
      ...
      lstm.pointwise_yield %cn, %hn : f32, f32
    }
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::cf::ControlFlowDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::tensor::TensorDialect"];
}

def LSTMWavefrontPass : Pass<"lstm-wavefront"> {
  let summary = "Run a stack of layers as a wavefront over its L + T - 1 diagonals";
  let description = [{
    Cell `(l, t)` of a stack depends on `(l - 1, t)` and `(l, t - 1)` only,
    so the cells of a diagonal `d = l + t` are independent. This pass turns
    a chain of L stacked `lstm.layer`s into one `scf.for` over the
    `L + T - 1` diagonals whose body runs the cell once for all L layers,
    batched: every value of the cell gains a leading extent L, every
    `lstm.gate` becomes a batched gate (one `linalg.batch_matmul` per
    product against the weights stacked `[L, H, K]`), and the pointwise
    math runs on `[L, B, H]` tensors. At diagonal `d`, layer `l` runs its
    step `s = d - l`; layers with `s < 0` or `s >= T` are inactive and keep
    their state (a `linalg.generic` selects old or new state per layer).

    Layer `l`'s input at step `s` is layer `l - 1`'s output at step `s`,
    which was computed at diagonal `d - 1`: the loop carries the previous
    diagonal's outputs `[L, B, N]`, and the input of the batched cell is
    `concat(x[t], outputs[0 .. L-2])`. A diagonal thus reads only values of
    the previous diagonal. Inactive layers compute on stale data; their
    results are never read (layer `l + 1` is active at `d + 1` exactly when
    layer `l` is active at `d`). Layer 0 reads `x` at `min(d, T - 1)`.

    **Layer 0 of another input size.** When layer 0's input slice has
    another type than the others' (`I != H`), it may only be used as the
    operand of gate products. Those products are then computed apart:
    layer 0's, which do not depend on the recurrence, as one product with
    its own weight over all `T·B` rows of `x` before the loop (as
    `lstm-hoist-input-projection` makes for a single layer), of which each
    diagonal takes its step; layers `1 .. L-1`'s as one batched product on
    the previous outputs; the two are stacked into an `[L, B, H]` addend of
    the batched gate.

    **Outputs read elsewhere.** A layer's outputs other than the one the
    next layer reads, and that one where it is also read elsewhere (the
    training forward of `lstm-differentiate` returns every layer's saved
    sequences), are stored by the loop a diagonal at a time: one
    `[L, L + T - 1, B, N]` tensor per output position, whose step `d` takes
    the batched cell's `[L, B, N]` value of diagonal `d` (of diagonal
    `L + T - 2 - d` in a reverse stack). Layer `l`'s sequence is then the
    contiguous view of its row from step `l` (`L - 1 - l` in reverse),
    without a copy in the loop. Such outputs need a static `N`. Where the
    link output is stored so (a training forward's `h`, a backward's `dG`),
    the last layer's sequence is its view too, not a sequence of its own.

    Those stores, and the copies of the views that a function returns (one
    buffer per result), cost more than the layers where the wavefront does
    not save much: a chain that has such outputs is rewritten only (a)
    where the loop runs fewer products one after the other than the layers
    would with their input products hoisted, `(T + L - 1)·P` against
    `L·T·(P - P_in)` (`P` products in a cell, `P_in` of them on its input;
    for a dynamic `T`, `P < L·(P - P_in)`): the LSTM needs three layers,
    Cho's GRU, with its second recurrent product, two; and (b) at the batch
    sizes where a layer's largest per-step product, `B·N·K` multiply-adds,
    is at most `side-output-max-product` (0 by default, which leaves such
    chains alone: on the CPU appleyard's training step measured 2.31 s as
    layers and 3.38 s as a wavefront; on the GPU 2^28, which
    `bench/compile_train.sh` passes through `lstm-optimize`: appleyard's
    LSTM, `64 × 2048 × 512`, gained; a GRU of H = 2048 at B = 128,
    `128 × 6144 × 2048`, lost 7-16%, its products filling the GPU alone):
    statically where the batch is known, else through an `scf.if` on it
    (the wavefront in its then branch, the layers in its else branch).
    With `fewer-products-only` (which `lstm-optimize` sets where it
    hoists) rule (a) applies to every chain: two LSTM layers' inference
    forward measured 12-35% faster as layers on the H100 (charrnn, latency;
    large in TF32), 1.4-3% slower only at large in fp32 (docs/benchmarks.md,
    "Two LSTM layers as layers").
    The if yields each store whole, the layers' branch putting its
    sequences where the views are (the store made before the layers, each
    sequence put in right after its layer, which
    `lstm-write-sequences-in-place` then has write it there), and the
    views are taken after it:
    through the if's result a view's strides would not be known, and
    bufferization would copy every saved sequence before the backward's
    products collapse it.

    **What it rewrites.** A chain is a maximal sequence of `lstm.layer`s in
    one block where layer `k + 1`'s first input is an output of layer `k`
    (the same output position along the chain) and no other layer reads
    layer `k`'s outputs as its first input. With `product-links`, the
    first input may also be that output times a weight over all steps at
    once, `expand(collapse(out) · W)` (a plain `linalg.generic` matmul into
    zeros, as `lstm-differentiate` writes a layer's input gradient
    `dX = dG · W`): the loop then computes it a diagonal at a time, one
    batched product over the previous diagonal's outputs of layers
    0 .. L-2 against their weights, stacked and transposed once before the
    loop, and counts it as a product of every diagonal below. That makes a
    stack's backward a reverse wavefront. Where the cell also multiplies
    the link output, or whole columns of it, by a captured weight of its
    own (the backward's recurrent product: `dG · R` for the LSTM,
    `[dr dz] · R_rz` for Cho's GRU, once `lstm-share-assembled-columns` has
    made `[dr dz]` a slice of `dG`), the two are one batched product: the
    cell's weights, with zero columns for the link output's other
    columns, and the links' (zeros for the last layer) stacked `[L, N + I,
    G]`; the loop then carries the link products. Its batched products are as
    deep as a step's gradients (`K = 4N` for the LSTM), which cuBLAS does
    not split in a batch: `lstm-to-nvvm` splits them under the fp32 compute
    type (`lstm-split-batched-gemms`). On the H100, with
    `side-output-max-product=2^28` (`bench/compile_train.sh` passes both),
    appleyard's training steps ran 4-31% faster, large's Cho GRU, above the
    batch bound, 1-2% slower (docs/benchmarks.md, "Split reductions");
    it is off by default, like the bound it shares.
    Other inputs than the first (the saved sequences a backward layer
    reads) must have the same types in every layer; each is laid out once
    before the loop as the stored outputs are, `[L, L + T - 1, ...]`, with
    zeros where a layer does not run, so that each diagonal reads every
    layer's step as one strided view. Ops between the layers that the
    chain does not read (a backward stack's weight gradients) move below
    its last layer first. It is rewritten when it has at least two layers
    and:
    - all layers run in the same direction (a reverse stack runs its
      diagonals over the reversed time index);
    - no layer has `lengths`;
    - the cells are identical up to the values they capture from above
      (weights, biases): same ops in the same order with the same
      attributes and result types, operands from the same place (same
      block argument, same op result, or a captured value of the same type
      in every layer; layer 0's input weights may differ as above);
      captured tensors are stacked `[L, ...]` before the loop, other
      captured values must be the same in every layer;
    - every op of the cell can be batched: `lstm.gate`, elementwise ops
      (`arith`, `math`, `lstm.one_minus`), `tensor.extract_slice`,
      `tensor.insert_slice`, `tensor.empty`, `tensor.dim` with a constant
      index, and ops without tensor operands or results (index constants);
    - the finals and outputs of the layers are only used after the last
      layer (the loop replaces them there); equal constants captured by
      the layers' cells count as one value.

    **Run-time checks.** What the layers' lowering would have checked at
    run time, the loop checks before it starts (`cf.assert`): every layer's
    initial states have the input's batch size, and the values stacked
    `[L, ...]` (states, captured weights) agree in their dynamic extents.

    T = 1, L > T and a dynamic T work (with T = 0 the loop runs no
    diagonal). Everything else is left alone: single layers, mixed
    directions, bidirectional stacks (their layers feed a `tensor.concat`,
    not the next layer), layers with `lengths`, links through a product
    without `product-links`, and cells that differ in structure. Before
    looking for chains, each cell goes through CSE and the layers are then
    canonicalised (`lstm.layer`'s patterns: a backward LSTM layer's unread
    `h_{t-1}` sequence goes, and its `dG`, which it returns twice, for the
    input and the recurrent weights' gradients, once CSE has made the two
    one value, is stored once).

    Run it after `lstm-combine-gate-gemms`, which only rewrites the cells
    of `lstm.layer`s: a combined cell is batched like any other (its packed
    weights are stacked `[L, G·H, K]`).

    **With persistent kernels** (`persistent=true`, what
    `lstm-optimize{persistent=true}` passes on): a chain whose every layer
    `lstm-to-persistent`'s cost model runs as a persistent kernel up to
    some batch size M, judged on the layer as `lstm-optimize{wavefront=false}`
    leaves it (input projections hoisted, pointwise work fused), is left to
    those kernels at batch sizes up to M: left alone where the batch size
    is static and at most M, made a wavefront where it is above, and where
    it is dynamic the ops from the first layer to the last go into both
    branches of an `scf.if %B <= M`, the layers as they are in the then
    branch and the wavefront loop in the else branch (for a chain with
    stored outputs, bounded as above: the else branch is split again at
    that bound). Without it, asking
    for persistent kernels meant giving up the wavefront at every batch
    size (`lstm-optimize{wavefront=false}`).

    Example: see `test/Dialect/LSTM/Transforms/wavefront.mlir` and
    `wavefront-persistent.mlir`.
  }];
  let options = [
    Option<"persistent", "persistent", "bool", /*default=*/"false",
           "Leave a chain to the persistent kernels at the batch sizes "
           "lstm-to-persistent's cost model runs all its layers at">,
    Option<"sideOutputMaxProduct", "side-output-max-product", "int64_t",
           /*default=*/"0",
           "A chain whose outputs are read outside it runs as a wavefront "
           "only at the batch sizes where a layer's largest per-step "
           "product, B*N*K multiply-adds, is at most this; 0 (the default) "
           "leaves such chains alone (2^28 measured well on the GPU)">,
    Option<"fewerProductsOnly", "fewer-products-only", "bool",
           /*default=*/"false",
           "Rewrite any chain only where the loop runs fewer products one "
           "after the other than its layers with their input products "
           "hoisted (lstm-optimize passes its `hoist`); chains whose "
           "outputs are read outside them always need it">,
    Option<"productLinks", "product-links", "bool", /*default=*/"false",
           "Also rewrite chains whose layers pass their outputs on through "
           "a product (a stack's backward: dG_l * W_l is the output "
           "gradient of layer l-1), the product made a diagonal at a time">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::cf::ControlFlowDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::scf::SCFDialect", "::mlir::tensor::TensorDialect"
  ];
}

def LSTMHoistInputProjectionPass : Pass<"lstm-hoist-input-projection"> {
  let summary = "Compute the input projections of all time steps in one GEMM before the layer";
  let description = [{
    A product `x_t · W^T` of a gate whose operand is the step's slice of an
    `ins` sequence and whose weight is defined above the layer does not
    depend on the recurrence: the products of all `T` steps can be computed
    at once, as one GEMM over `T·B` rows, before the time loop. Only the
    recurrent products stay in the loop.

    For each group of such products on the same slice (all of them when the
    weights stack: static shapes, one column count), the pass emits before
    the layer

    ```mlir
    %flat = tensor.collapse_shape %x [[0, 1], [2]] : tensor<?x?x64xf32> into tensor<?x64xf32>
    %W = tensor.concat dim(0) %Wi, %Wf : (...) -> tensor<256x64xf32>
    %p = lstm.gate identity(%flat : tensor<?x64xf32>) weights(%W : tensor<256x64xf32>) -> tensor<?x256xf32>
    %P = tensor.expand_shape %p [[0, 1], [2]] output_shape [%T, %B, 256] : tensor<?x256xf32> into tensor<?x?x256xf32>
    ```

    passes `%P` to the layer as an additional `ins` sequence (its step slice
    `[B, 256]` becomes a new cell argument after the existing input slices),
    and each gate receives its columns of the slice
    (`tensor.extract_slice`) as an addend instead of the product. Weights
    are stacked only when the group has more than one product.

    After `lstm-combine-gate-gemms`, the combined `identity` gate on `x_t`
    is such a group of one: it becomes the hoisted GEMM, and the cell uses
    the step slice directly. In a stack, each layer's input projection is
    hoisted right before that layer (it reads the previous layer's output).

    Biases are folded into the hoisted GEMM (as `bias(...)` of the hoisted
    gate, stacked and padded with zeros for the other gates of the group)
    only when this is exact in floating point: the gate's only other term is
    its single hoisted product (no other products, addends or peephole).
    The gate then computes `act(0 + (x·W^T + b))`, the same sums in the same
    order as before.

    An `ins` sequence whose slice is no longer read in the cell is dropped
    from the layer. Direction and `lengths` are unaffected: the hoisted
    sequence is indexed by the same `t` as `x`, and rows past their length
    are masked by the layer as before (the GEMM is row by row, so whatever
    the padded rows of `x` hold stays in those rows).

    Products on recurrent state, on values computed in the cell, or with a
    weight defined inside the cell stay where they are. The grouping comes
    from `CellDependence::getInputProjectionGroups`.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::cf::ControlFlowDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

def LSTMSplitBatchPass : Pass<"lstm-split-batch"> {
  let summary = "Run each layer on parts of the batch, one part a thread, "
                "for the whole sequence";
  let description = [{
    A layer's batch rows are independent: row `b`'s state at step `t`
    depends on row `b`'s inputs and state only. On a CPU, threads that
    split every step's product and cell meet twice a step (measured on 16
    cores: a step of `examples/stack3.mlir` at B = 32 took 28 µs on 16
    threads, 65 µs on one). Here a layer whose cell computes
    each row from that row alone becomes an `scf.forall` over parts of its
    batch, each part the layer on its rows for the whole sequence, with no
    synchronisation until the layer ends:

    ```mlir
    %n = min(max(call @threads(), 1), max(B / min-rows, 1),
             max(T · B · weight elements / min-part-work, 1))
    %y, %hT = scf.forall (%k) in (%n) shared_outs(%oy = alloc [T, B, N],
                                                  %oh = alloc [B, N]) {
      // rows [k·B/n, (k+1)·B/n)
      %xs = tensor.extract_slice %x[0, lo, 0] [T, m, K] [1, 1, 1]
      %hs = tensor.extract_slice %h0[lo, 0] [m, N] [1, 1]
      %ys, %hTs = lstm.layer forward ins(%xs) init(%hs) { same cell }
      scf.forall.in_parallel {
        tensor.parallel_insert_slice %ys into %oy[0, lo, 0] [T, m, N] [1, 1, 1]
        tensor.parallel_insert_slice %hTs into %oh[lo, 0] [m, N] [1, 1]
      }
    }
    ```

    The CPU lowering runs each iteration on a thread of the runtime
    (`lstm-outline-parallel-loops`), whose products and cells inside then
    stay on that thread. Each thread reads the layer's weights at every
    step, so a layer is split only where the weights its cell multiplies
    fit `max-weight-bytes` (a core's share of cache); with one part (a
    batch of fewer than `2 · min-rows` rows, or one thread) the layer runs
    as before, its products split among the threads at every step (the
    CPU lowering then has each part build its state stack in the whole
    output, `lstm-write-part-stacks-in-place`). The extents the layer's
    lowering checks (every batch against the first sequence's) are checked
    before the parts are cut. Results of one thread count are the same at
    every call; two counts may differ in the last bit (the parts' products
    have other row counts).

    A layer is left alone unless every sequence, state, output and final
    state is f32 with a dynamic batch extent (the cell's types then hold
    for any part), and its cell is row-wise: the values computed from the
    step's slices and states (the batch values) meet the values from above
    only as a gate's weights, biases and peephole weights, or as a
    `lstm.pointwise` broadcast operand; they go through `lstm.gate`,
    `lstm.one_minus`, `lstm.pointwise`, element-wise ops, `tensor.dim`,
    `tensor.empty`, `linalg.fill`, `tensor.cast`, `tensor.concat` along
    another dimension than the batch, and `tensor.extract_slice` and
    `tensor.insert_slice` that keep every row. `-debug-only=lstm-split-batch`
    prints why a layer is left alone. f64 layers stay whole: their products
    go to OpenBLAS, whose own threads would compete with the parts'; so do
    layers with a static extent of 0. `lstm-to-cpu` runs the pass after
    `lstm-chunk-hoisted-projections` with the CPU runtime's
    `lstmRuntimeCpuGetThreads` (`split-batch=0` leaves it out).
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::bufferization::BufferizationDialect",
    "::mlir::func::FuncDialect", "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect"
  ];
  let options = [
    Option<"threadsFunction", "threads-function", "std::string",
           /*default=*/"\"\"",
           "A function () -> i32 giving the number of threads at run time "
           "(required)">,
    Option<"minRows", "min-rows", "int64_t", /*default=*/"1",
           "The fewest batch rows a part takes">,
    Option<"minPartWork", "min-part-work", "int64_t", /*default=*/"262144",
           "The fewest multiply-adds of the layer's products (T · rows · the "
           "weights' elements) a part takes">,
    Option<"maxWeightBytes", "max-weight-bytes", "int64_t",
           /*default=*/"1048576",
           "The most bytes of weights a layer's cell may multiply for parts "
           "of min-rows rows (each thread reads them at every step)">,
    Option<"largeWeightMinRows", "large-weight-min-rows", "int64_t",
           /*default=*/"0",
           "The fewest rows of a part of a layer whose weights exceed "
           "max-weight-bytes (read at every step from a cache shared by the "
           "cores, each weight then multiplies as many rows); 0 (the "
           "default: appleyard's 4 MiB layers measured 1.07-1.74x slower "
           "split in parts of 8 rows or more): such layers stay whole">,
  ];
}

def LSTMChunkHoistedProjectionsPass : Pass<"lstm-chunk-hoisted-projections"> {
  let summary = "Compute a hoisted input projection a chunk of steps at a time, while the steps that read it are in cache";
  let description = [{
    `lstm-hoist-input-projection` computes a layer's input projection for
    all `T` steps before the time loop: one `[T·B, K] x [K, N]` GEMM whose
    `[T, B, N]` result is written out and read back a step at a time. On a
    CPU that result (3.2 MB a layer of `examples/stack3.mlir` at B = 32)
    leaves the caches before the steps read it, and the cell's first loads
    wait for memory; on one thread the hoisted layers measured 5-8% slower
    than the same layers with their input products in the step
    (docs/benchmarks.md, "The CPU"). This pass keeps a large GEMM and the
    cache: the layer runs as a loop over chunks of steps, each chunk
    projecting its own `[Tc·B, K]` rows, then running its `Tc` steps as an
    `lstm.layer` of its own, whose outputs go into their slice of the
    whole sequence and whose final state starts the next chunk.

    ```mlir
    %out, %hT = scf.for %c = %c0 to %T step %k iter_args(%y = %empty, %h = %h0) {
      %Tc = arith.minsi %k, (%T - %c)       // t0 = %c, or T - c - Tc reversed
      %xc = tensor.extract_slice %x[%t0, 0, 0] [%Tc, %B, 64] [1, 1, 1]
      %p = lstm.gate identity(collapse(%xc)) weights(%W) -> tensor<?x512xf32>
      %yc, %hc = lstm.layer forward ins(expand(%p)) init(%h) { ...the cell... }
      %y2 = tensor.insert_slice %yc into %y[%t0, 0, 0] [%Tc, %B, 128] [1, 1, 1]
      scf.yield %y2, %hc
    }
    ```

    A chunk holds `k = max(1, chunk-bytes / (B · N · element size))` steps
    (computed at run time from the batch), so that its projection fits in
    `chunk-bytes`. Where `chunk-bytes` is not more than `weights-per-chunk`
    (2) times the bytes of the projection's weights, the projection stays
    whole (one chunk of `T` steps): the GEMM streams the weights through
    the cache (and a GEMM library packs them at every call, once a chunk),
    so the chunk would not stay there. Appleyard's layers (4 MiB of
    weights) measured 33% slower in chunks of 1 MiB (2 steps), 2-10% in
    chunks of four times their weights, than whole. A reverse layer takes its chunks from the end. The steps
    run in the same order on the same operands; only the projection's GEMM
    sees fewer rows at a time, which a GEMM library may round differently
    (a last-bit difference: 1e-7 relative on `examples/stack3.mlir`).

    Applies to layers whose only `ins` sequence is a hoisted projection (a
    `tensor.expand_shape` of an `lstm.gate` whose rows operands all collapse
    one `[T, B, K]` sequence), without `lengths` (whose checks against `T`
    the layer's lowering makes) and without discardable attributes (the
    wavefront's loops). With `threads-function` (a function `() -> i32`,
    declared where the module lacks it), `chunk-bytes` is a thread's: the
    chunk is that times the number of threads at run time, since each
    thread of the GEMMs has its own cache, and with many threads a whole
    projection splits better among them. `lstm-to-cpu` runs the pass first
    where its `chunk-bytes` is set (0, the default, leaves the projections
    whole: 1 MiB measured 1-5% faster on one and two threads, 1-4% slower
    on 4 to 16), with the CPU runtime's `lstmRuntimeCpuGetThreads`; on the GPU the whole
    projection stays one GEMM. `lstm-prepare-loop-gemms` then packs a
    chunked layer's recurrent weight once, before the loop over chunks.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::func::FuncDialect",
    "::mlir::scf::SCFDialect", "::mlir::tensor::TensorDialect"
  ];
  let options = [
    Option<"chunkBytes", "chunk-bytes", "int64_t", /*default=*/"1048576",
           "The bytes of a chunk's projection (at least one step a chunk)">,
    Option<"weightsPerChunk", "weights-per-chunk", "int64_t",
           /*default=*/"2",
           "Chunks only where chunk-bytes is more than this many times the "
           "bytes of the projection's weights; else the projection stays "
           "whole (0: always chunks)">,
    Option<"threadsFunction", "threads-function", "std::string",
           /*default=*/"\"\"",
           "A function () -> i32 giving the number of threads at run time: "
           "chunk-bytes is then a thread's, the chunk that times the "
           "threads (empty: none)">
  ];
}

def LSTMHoistByThreadsPass : Pass<"lstm-hoist-by-threads"> {
  let summary = "Keep hoisted input projections where enough threads run them, compute them in the steps otherwise";
  let description = [{
    A hoisted input projection (`lstm-hoist-input-projection`) is one
    `[T·B, K] x [K, N]` GEMM before the layer, whose `[T, B, N]` result the
    steps read back. Many threads split that GEMM well; on one CPU thread
    the layer ran 5-11% faster with its input products in the steps (0-3%
    on two, up to 24% slower from three: docs/benchmarks.md, "Hoisted or
    in the steps, by thread count"), where a step's input and recurrent
    products are read by the cell while in cache. The thread count is
    known at run time only, so every layer that reads a hoisted projection
    becomes both forms:

    ```mlir
    %n = call @threads() : () -> i32          // threads-function
    %hoist = arith.cmpi sge, max(%n, 1), %min_threads
    %y, %hT = scf.if %hoist {
      %p = lstm.gate identity(collapse(%x)) weights(%W) ...   // as it was
      %y, %hT = lstm.layer forward ins(expand(%p)) ...
      scf.yield %y, %hT
    } else {
      %y, %hT = lstm.layer forward ins(%x) ... {
      ^bb0(%xt: tensor<?x64xf32>, %h: tensor<?x128xf32>):
        %g = lstm.gate identity(%xt, %h) weights(%W, %R) bias(%b) ...
        ...
      }
      scf.yield %y, %hT
    }
    ```

    The second branch's cell projects its step's slice with the hoisted
    gate's operands; where that projection is only an addend of a gate of
    its type (the combined gate), its products and biases join that gate,
    as before hoisting. Results agree to rounding (the sums reassociate).
    Layers whose sequences are no hoisted projection are left alone.
    `lstm-to-cpu` runs the pass first (before
    `lstm-chunk-hoisted-projections`, which then chunks the first branch's
    layers) with its `hoist-min-threads` (3) and the CPU runtime's
    `lstmRuntimeCpuGetThreads`. `min-threads` of 1 or less changes nothing.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::func::FuncDialect",
    "::mlir::scf::SCFDialect", "::mlir::tensor::TensorDialect"
  ];
  let options = [
    Option<"minThreads", "min-threads", "int64_t", /*default=*/"3",
           "The least number of threads that runs the projections hoisted; "
           "fewer compute them in the steps (1 or less: always hoisted)">,
    Option<"threadsFunction", "threads-function", "std::string",
           /*default=*/"\"\"",
           "A function () -> i32 giving the number of threads at run time "
           "(declared where the module lacks it; required)">
  ];
}

def LSTMDifferentiatePass : Pass<"lstm-differentiate", "::mlir::ModuleOp"> {
  let summary = "Add the gradient functions of every public function with lstm.layer ops";
  let description = [{
    Reverse-mode differentiation at the level of the `lstm` dialect. For each
    public `func.func @f` of the module that holds `lstm.layer` ops, adds:

    - `@f_grad(args..., cotangents...) -> (gradients...)`: one cotangent per
      result of `@f`, in order; one gradient per float argument of `@f`, in
      order. Integer arguments (sequence lengths) get no gradient. An
      argument that no result depends on gets zeros.
    - `@f_train(args...) -> (results..., saved...)`: the forward in training
      mode: `@f`'s results, then the saved activations the backward needs
      (cuDNN's "reserve space").
    - `@f_backward(args..., results..., saved..., cotangents...) ->
      (gradients...)`: the backward from what `@f_train` returned; a
      training step runs the recurrence forward once.

    Derivatives come from the IR, op by op, through `AdjointOpInterface`:
    `lstm.gate` (activation, products, addends, biases, peephole),
    `lstm.one_minus`, `lstm.pointwise` (its adjoint is another fused
    region), the elementwise `arith` and `math` ops, and the `tensor` ops
    that slice, stack and reshape (`extract_slice`, `insert_slice`,
    `concat`, `collapse_shape`, `expand_shape`, `cast`). An op on the path
    from the arguments to the results without a derivative is an error
    naming it.

    Each `lstm.layer` gets a backward `lstm.layer` walking the other way in
    time, whose state is the cotangent of the forward state and whose cell
    is the adjoint of the forward cell; it has the forward's `lengths`, so
    no gradient flows through padded steps. The forward layer returns what
    the backward cell reads as extra output sequences: the state each step
    started from and the result of each gate (the pointwise values in
    between are recomputed in the backward step). Only the recurrent chain
    stays in the backward loop: per step, the gradient towards the previous
    state is a gate product against the transposed weight (one GEMM per
    step when the forward's products were combined by
    `lstm-combine-gate-gemms` first); the gradients of the weights
    (`dW = dZ^T X`, one GEMM over all T·B rows), of the inputs through the
    input weights (`dX = dZ W`), and of biases and peepholes (sums over all
    rows) are computed after the loop.

    The gradient functions are lstm IR: `lstm-optimize` and both lowerings
    apply to them as to the forward. Run `lstm-combine-gate-gemms` before
    this pass for one recurrent GEMM per backward step (`lstm-optimize`
    with `differentiate=true` does). The pass runs before `lstm-wavefront`:
    the batched gates of a wavefront loop are not differentiated.

    With `grad-function=false` only `@f_train` and `@f_backward` are added:
    a training step calls nothing else (PyTorch's autograd through
    `lstmc.torch_module`), and `@f_grad` would be a third copy of the
    recurrence to compile (a third of the gradient library's compile time).
    With `forward-through-train`, `@f` itself becomes a call of `@f_train`
    that returns its first results and drops the saved activations: the
    library then compiles the recurrence twice (training forward and
    backward) instead of three times, and a call of `@f` (inference under
    `torch.no_grad()`) runs the training forward, storing the activations
    it does not return.
  }];
  let options = [
    Option<"gradFunction", "grad-function", "bool", /*default=*/"true",
           "Also add @f_grad (the training forward and the backward in one "
           "function); false adds only @f_train and @f_backward">,
    Option<"forwardThroughTrain", "forward-through-train", "bool",
           /*default=*/"false",
           "Make @f a call of @f_train that drops the saved activations: one "
           "copy of the recurrence fewer to compile, at the cost of "
           "inference storing what a training step saves">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect", "::mlir::tensor::TensorDialect"
  ];
}

def LSTMScheduleReportPass : Pass<"lstm-schedule-report", "::mlir::ModuleOp"> {
  let summary = "Print the per-step schedule of every layer (analysis only)";
  let description = [{
    Prints one line per `lstm.layer`, in function and block order, and
    leaves the IR unchanged:

    ```
    @forward layer 0 (forward): gemms/step=2 pointwise/step=9 hoisted-gemms=1 steps=T gemms-after=0
    ```

    - `gemms/step`: the matrix products in the cell, one per
      `(input, weight)` pair of an `lstm.gate` (each is one contraction in
      the lowering).
    - `pointwise/step`: the pointwise kernels of one step: each `lstm.gate`
      without products, each gate with products that also has an epilogue
      (an activation other than `identity`, addends, biases or a peephole),
      each `lstm.one_minus`, each `arith`/`math` op on tensors, and each op
      holding a region (a fused pointwise region counts once).
      `tensor.extract_slice` and other views count nothing.
    - `hoisted-gemms`: the products computed before the layer for all steps
      at once: those of the `lstm.gate`s that produce the layer's `ins`
      sequences through `tensor.expand_shape` (what
      `lstm-hoist-input-projection` emits).
    - `steps`: the sequential steps, the static `T` of the layer's first
      input, or `T` when it is dynamic.
    - `gemms-after`: the products computed after the layer over all of its
      steps at once from its output sequences (through reshapes): the
      weight and input gradients that the backward layers of
      `lstm-differentiate` leave to the end (`lstm.gate` products and
      linalg contractions).

    - `persistent` (with the option of that name): what `lstm-to-persistent`
      does with the layer, with its cost model and the options
      `lstm-to-nvvm{persistent=true}` gives it for the GPU `chip` under
      `compute-type` (`lstm-compile --persistent --chip=... --compute-type=...`;
      `tensor-cores` as its `persistent-tensor-cores`):
      `B<=M` (a persistent kernel while the batch size is at most M, the
      per-step lowering above), or `no (why)`; then, where the kernel's
      products run on tensor cores from some batch N on (a kernel of dot
      products below it), `tensor-cores=B>=N (KIND)`, KIND `3xtf32` (the
      fp32 compute type: operands split into two TF32 values), `tf32` or
      `bf16`. It reads the form that
      `lstm-optimize{wavefront=false}` leaves; after
      `lstm-optimize{persistent=true}` a stack shows as its layers
      (`B<=M`) and then its wavefront, `no (a wavefront of layers, run
      where B>M, the layers above where B<=M)`.

    - `stack` (with `persistent`): where `lstm-to-persistent` runs the
      layer in one kernel with the others of its chain, `stack=I-J (one
      kernel of N blocks of K threads, B<=M)`, I to J the chain's layers,
      and `tensor-cores=B>=N (KIND)` where that kernel runs on tensor
      cores from batch N.

    Layers are numbered from 0 in each function; the direction is
    `forward` or `reverse`. The report goes to stderr unless `output-file`
    names a file (`-` is stdout).
  }];
  let options = [
    Option<"outputFile", "output-file", "std::string", /*default=*/"\"\"",
           "Where to write the report: a file name, '-' for stdout; "
           "stderr when empty">,
    Option<"persistent", "persistent", "bool", /*default=*/"false",
           "Also say whether lstm-to-persistent runs each layer as a "
           "persistent kernel, and why not">,
    Option<"computeType", "compute-type", "::mlir::lstm::GemmComputeType",
           /*default=*/"::mlir::lstm::GemmComputeType::fp32",
           "With persistent, the compute type the kernels are built for: "
           "fp32, tf32 or bf16",
           "::mlir::lstm::gemmComputeTypeValues()">,
    Option<"chip", "chip", "std::string",
           /*default=*/"::mlir::lstm::kDefaultGpuChip.str()",
           "With persistent, the GPU architecture the kernels are built for">,
    Option<"tensorCores", "tensor-cores", "bool", /*default=*/"true",
           "With persistent, the kernels' products on tensor cores where "
           "lstm-to-nvvm's persistent-tensor-cores would put them (sm_80 "
           "and later)">
  ];
}

#endif // LSTM_DIALECT_LSTM_TRANSFORMS_PASSES_TD
