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
    "::mlir::arith::ArithDialect", "::mlir::tensor::TensorDialect"
  ];
}

def LSTMScheduleReportPass : Pass<"lstm-schedule-report", "::mlir::ModuleOp"> {
  let summary = "Print the per-step schedule of every layer (analysis only)";
  let description = [{
    Prints one line per `lstm.layer`, in function and block order, and
    leaves the IR unchanged:

    ```
    @forward layer 0 (forward): gemms/step=2 pointwise/step=9 hoisted-gemms=1 steps=T
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

    Layers are numbered from 0 in each function; the direction is
    `forward` or `reverse`. The report goes to stderr unless `output-file`
    names a file (`-` is stdout).
  }];
  let options = [
    Option<"outputFile", "output-file", "std::string", /*default=*/"\"\"",
           "Where to write the report: a file name, '-' for stdout; "
           "stderr when empty">
  ];
}

#endif // LSTM_DIALECT_LSTM_TRANSFORMS_PASSES_TD
