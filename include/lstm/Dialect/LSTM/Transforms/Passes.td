//===- Passes.td - Rewrites of the lstm dialect ------------*- tablegen -*-===//

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
    per step (with constant weights, it is left to the folders). Inside the
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
  let dependentDialects = ["::mlir::tensor::TensorDialect"];
}

def LSTMFuseElementwisePass : Pass<"lstm-fuse-elementwise"> {
  let summary = "Fuse the pointwise work of each step between GEMMs into lstm.pointwise ops";
  let description = [{
    In every `lstm.layer`, the pointwise work of a step (gates without
    matrix products, the epilogue of gates with products: addends, biases,
    peephole and activation; `lstm.one_minus`; elementwise `arith`/`math` on
    `[B, N]` tensors: the cell update, the output) becomes as few
    `lstm.pointwise` ops as the GEMMs between them allow, each lowered to one
    `linalg.generic` and, on the GPU, one kernel per step.

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
    where the gate was; its epilogue joins the group. Inside the region the
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
                           "::mlir::math::MathDialect"];
}

#endif // LSTM_DIALECT_LSTM_TRANSFORMS_PASSES_TD
