// RUN: lstm-opt %s --lstm-gemm-operands-to-bf16 -split-input-file | FileCheck %s
// RUN: lstm-opt %s --lstm-gemm-operands-to-bf16 --linalg-generalize-named-ops -split-input-file | FileCheck %s --check-prefix=GEN

// A step's product h·R^T in the time loop (the contraction convert-lstm-to-linalg
// emits for a gate): R, defined outside the loop, is rounded once before it;
// the state h, a loop argument, once per step at the top of the body. The
// contraction reads the bf16 copies and extends them to f32 in its body:
// products and sums stay f32, as does the accumulator.
#in = affine_map<(b, h, k) -> (b, k)>
#w = affine_map<(b, h, k) -> (h, k)>
#acc = affine_map<(b, h, k) -> (b, h)>
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[IN:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[W:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG: #[[ACC:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @step_loop
// CHECK-SAME: (%[[H0:.*]]: tensor<?x128xf32>, %[[R:.*]]: tensor<128x128xf32>, %[[T:.*]]: index)
// CHECK: %[[REMPTY:.*]] = tensor.empty() : tensor<128x128xbf16>
// CHECK: %[[R16:.*]] = linalg.generic {indexing_maps = [#[[ID]], #[[ID]]], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME: ins(%[[R]] : tensor<128x128xf32>) outs(%[[REMPTY]] : tensor<128x128xbf16>)
// CHECK-NEXT: ^bb0(%[[A:.*]]: f32, %{{.*}}: bf16):
// CHECK-NEXT: %[[T16:.*]] = arith.truncf %[[A]] : f32 to bf16
// CHECK-NEXT: linalg.yield %[[T16]] : bf16
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[T]] step %{{.*}} iter_args(%[[H:.*]] = %[[H0]]) -> (tensor<?x128xf32>) {
// The state's rounding is the first thing of the step.
// CHECK-NEXT: %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[B:.*]] = tensor.dim %[[H]], %[[C0]]
// CHECK-NEXT: %[[HEMPTY:.*]] = tensor.empty(%[[B]]) : tensor<?x128xbf16>
// CHECK-NEXT: %[[H16:.*]] = linalg.generic {{.*}} ins(%[[H]] : tensor<?x128xf32>) outs(%[[HEMPTY]] : tensor<?x128xbf16>)
// CHECK: arith.truncf
// CHECK: linalg.generic {indexing_maps = [#[[IN]], #[[W]], #[[ACC]]], iterator_types = ["parallel", "parallel", "reduction"]}
// CHECK-SAME: ins(%[[H16]], %[[R16]] : tensor<?x128xbf16>, tensor<128x128xbf16>) outs(%{{.*}} : tensor<?x128xf32>)
// CHECK-NEXT: ^bb0(%[[X:.*]]: bf16, %[[Y:.*]]: bf16, %[[O:.*]]: f32):
// CHECK-NEXT: %[[X32:.*]] = arith.extf %[[X]] : bf16 to f32
// CHECK-NEXT: %[[Y32:.*]] = arith.extf %[[Y]] : bf16 to f32
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[X32]], %[[Y32]] : f32
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[O]], %[[P]] : f32
// CHECK-NEXT: linalg.yield %[[S]] : f32
// No other rounding: the weight's happens once, before the loop.
// CHECK-NOT: arith.truncf
// CHECK: scf.yield
func.func @step_loop(%h0: tensor<?x128xf32>, %r: tensor<128x128xf32>, %t: index) -> tensor<?x128xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %res = scf.for %i = %c0 to %t step %c1 iter_args(%h = %h0) -> (tensor<?x128xf32>) {
    %b = tensor.dim %h, %c0 : tensor<?x128xf32>
    %e = tensor.empty(%b) : tensor<?x128xf32>
    %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<?x128xf32>) -> tensor<?x128xf32>
    %p = linalg.generic {indexing_maps = [#in, #w, #acc],
                         iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%h, %r : tensor<?x128xf32>, tensor<128x128xf32>) outs(%acc : tensor<?x128xf32>) {
    ^bb0(%x: f32, %y: f32, %o: f32):
      %m = arith.mulf %x, %y : f32
      %s = arith.addf %o, %m : f32
      linalg.yield %s : f32
    } -> tensor<?x128xf32>
    %n = math.tanh %p : tensor<?x128xf32>
    scf.yield %n : tensor<?x128xf32>
  }
  return %res : tensor<?x128xf32>
}

// -----

// A value read by several products is rounded once; an operand defined by an
// op is rounded right after it, a function argument at the function's entry.
// CHECK-LABEL: func.func @shared_operand
// CHECK-COUNT-2: arith.truncf
// CHECK: %[[X:.*]] = tensor.extract_slice
// CHECK-NEXT: tensor.empty() : tensor<4x16xbf16>
// CHECK-NEXT: %[[X16:.*]] = linalg.generic {{.*}} ins(%[[X]] : tensor<4x16xf32>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.truncf
// CHECK-NOT: arith.truncf
// CHECK: linalg.matmul ins(%[[X16]], %{{.*}} : tensor<4x16xbf16>, tensor<16x8xbf16>) outs(%{{.*}} : tensor<4x8xf32>)
// CHECK: linalg.matmul ins(%[[X16]], %{{.*}} : tensor<4x16xbf16>, tensor<16x8xbf16>) outs(%{{.*}} : tensor<4x8xf32>)
func.func @shared_operand(%xs: tensor<8x16xf32>, %a: tensor<16x8xf32>, %b: tensor<16x8xf32>,
                          %c: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %x = tensor.extract_slice %xs[0, 0] [4, 16] [1, 1] : tensor<8x16xf32> to tensor<4x16xf32>
  %p = linalg.matmul ins(%x, %a : tensor<4x16xf32>, tensor<16x8xf32>) outs(%c : tensor<4x8xf32>) -> tensor<4x8xf32>
  %q = linalg.matmul ins(%x, %b : tensor<4x16xf32>, tensor<16x8xf32>) outs(%c : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %p, %q : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// A named contraction keeps its indexing maps (the weights read transposed, as
// the wavefront's batched gate products are) and gets the body of its new
// types: the bf16 operands are extended to f32 before the multiply-add.
// CHECK-DAG: #[[MA:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
// CHECK-DAG: #[[MB:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>
// CHECK-DAG: #[[MC:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @batched
// CHECK: %[[OUT:.*]] = linalg.batch_matmul indexing_maps = [#[[MA]], #[[MB]], #[[MC]]]
// CHECK-SAME: ins(%{{.*}}, %{{.*}} : tensor<3x?x64xbf16>, tensor<3x256x64xbf16>) outs(%{{.*}} : tensor<3x?x256xf32>)
// CHECK: return %[[OUT]]
// Generalised, the batch_matmul shows what it computes.
// GEN-LABEL: func.func @batched
// GEN: linalg.generic {{.*}}"reduction"]
// GEN-SAME: ins(%{{.*}}, %{{.*}} : tensor<3x?x64xbf16>, tensor<3x256x64xbf16>) outs(%{{.*}} : tensor<3x?x256xf32>)
// GEN-NEXT: ^bb0(%[[IA:.*]]: bf16, %[[IB:.*]]: bf16, %[[IC:.*]]: f32):
// GEN-NEXT: %[[EA:.*]] = arith.extf %[[IA]] : bf16 to f32
// GEN-NEXT: %[[EB:.*]] = arith.extf %[[IB]] : bf16 to f32
// GEN-NEXT: %[[M:.*]] = arith.mulf %[[EA]], %[[EB]] : f32
// GEN-NEXT: %[[S:.*]] = arith.addf %[[IC]], %[[M]] : f32
func.func @batched(%x: tensor<3x?x64xf32>, %w: tensor<3x256x64xf32>, %acc: tensor<3x?x256xf32>) -> tensor<3x?x256xf32> {
  %r = linalg.batch_matmul
      indexing_maps = [affine_map<(l, b, h, k) -> (l, b, k)>, affine_map<(l, b, h, k) -> (l, h, k)>,
                       affine_map<(l, b, h, k) -> (l, b, h)>]
      ins(%x, %w : tensor<3x?x64xf32>, tensor<3x256x64xf32>) outs(%acc : tensor<3x?x256xf32>) -> tensor<3x?x256xf32>
  return %r : tensor<3x?x256xf32>
}

// -----

// Left alone: f64 products, products that are already bf16, bf16 results,
// and what is not a contraction.
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: arith.truncf
// CHECK-NOT: arith.extf
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<4x16xf64>, tensor<16x8xf64>) outs(%{{.*}} : tensor<4x8xf64>)
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<4x16xbf16>, tensor<16x8xbf16>) outs(%{{.*}} : tensor<4x8xf32>)
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<4x16xf32>, tensor<16x8xf32>) outs(%{{.*}} : tensor<4x8xbf16>)
// CHECK: linalg.add ins(%{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<4x8xf32>)
// CHECK-NOT: arith.truncf
func.func @left_alone(%a64: tensor<4x16xf64>, %b64: tensor<16x8xf64>, %c64: tensor<4x8xf64>,
                      %a16: tensor<4x16xbf16>, %b16: tensor<16x8xbf16>, %c: tensor<4x8xf32>,
                      %a: tensor<4x16xf32>, %b: tensor<16x8xf32>, %c16: tensor<4x8xbf16>)
    -> (tensor<4x8xf64>, tensor<4x8xf32>, tensor<4x8xbf16>, tensor<4x8xf32>) {
  %0 = linalg.matmul ins(%a64, %b64 : tensor<4x16xf64>, tensor<16x8xf64>) outs(%c64 : tensor<4x8xf64>) -> tensor<4x8xf64>
  %1 = linalg.matmul ins(%a16, %b16 : tensor<4x16xbf16>, tensor<16x8xbf16>) outs(%c : tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = linalg.matmul ins(%a, %b : tensor<4x16xf32>, tensor<16x8xf32>) outs(%c16 : tensor<4x8xbf16>) -> tensor<4x8xbf16>
  %3 = linalg.add ins(%1, %c : tensor<4x8xf32>, tensor<4x8xf32>) outs(%c : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0, %1, %2, %3 : tensor<4x8xf64>, tensor<4x8xf32>, tensor<4x8xbf16>, tensor<4x8xf32>
}

// -----

// One operand already bf16: only the f32 one is rounded.
// CHECK-LABEL: func.func @mixed
// CHECK-SAME: (%[[A:.*]]: tensor<4x16xbf16>, %[[B:.*]]: tensor<16x8xf32>
// CHECK-COUNT-1: arith.truncf
// CHECK-NOT: arith.truncf
// CHECK: linalg.matmul ins(%[[A]], %{{.*}} : tensor<4x16xbf16>, tensor<16x8xbf16>) outs(%{{.*}} : tensor<4x8xf32>)
func.func @mixed(%a: tensor<4x16xbf16>, %b: tensor<16x8xf32>, %c: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = linalg.matmul ins(%a, %b : tensor<4x16xbf16>, tensor<16x8xf32>) outs(%c : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}
