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

#endif // LSTM_DIALECT_LSTM_TRANSFORMS_PASSES_TD
