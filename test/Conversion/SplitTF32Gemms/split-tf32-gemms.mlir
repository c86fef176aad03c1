// RUN: lstm-opt %s --lstm-split-tf32-gemms -split-input-file | FileCheck %s
// RUN: lstm-opt %s --lstm-split-tf32-gemms=in-loops=false -split-input-file | FileCheck %s --check-prefix=OUTSIDE
// RUN: lstm-opt %s --lstm-split-tf32-gemms=min-rows=256 -split-input-file | FileCheck %s --check-prefix=ROWS
// RUN: lstm-opt %s --lstm-split-tf32-gemms=max-depth=16 -split-input-file | FileCheck %s --check-prefix=DEPTH

// A step's product h·R^T in the time loop: R, defined outside the loop, is
// split once before it into [R_hi ; R_lo ; R_hi] along its reduction
// dimension (the part of extent 3 before it, collapsed into it); the state h,
// a loop argument, once per step into [h_lo | h_hi | h_hi], where the batch
// has at least min-rows rows (128; the product's columns, 512, are static).
// The contraction reads both, of depth 3·128, and is marked for TF32
// arithmetic; the other branch keeps the product as it was. The zero fill of
// the accumulator goes into each branch.
#in = affine_map<(b, h, k) -> (b, k)>
#w = affine_map<(b, h, k) -> (h, k)>
#acc = affine_map<(b, h, k) -> (b, h)>
// CHECK-DAG: #[[READ:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @step_loop
// CHECK-SAME: (%[[H0:.*]]: tensor<?x128xf32>, %[[R:.*]]: tensor<512x128xf32>, %[[T:.*]]: index)
// CHECK: %[[RE:.*]] = tensor.empty() : tensor<512x3x128xf32>
// CHECK: %[[RP:.*]] = linalg.generic {indexing_maps = [#[[READ]], #[[ID]]], iterator_types = ["parallel", "parallel", "parallel"]}
// CHECK-SAME: ins(%[[R]] : tensor<512x128xf32>) outs(%[[RE]] : tensor<512x3x128xf32>)
// CHECK-NEXT: ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[BITS:.*]] = arith.bitcast %[[X]] : f32 to i32
// CHECK-DAG: %[[HALF:.*]] = arith.constant 4096 : i32
// CHECK-DAG: %[[KEPT:.*]] = arith.constant -8192 : i32
// CHECK: %[[ROUNDED:.*]] = arith.addi %[[BITS]], %[[HALF]] : i32
// CHECK: %[[HIBITS:.*]] = arith.andi %[[ROUNDED]], %[[KEPT]] : i32
// CHECK: %[[HI:.*]] = arith.bitcast %[[HIBITS]] : i32 to f32
// CHECK: %[[LO:.*]] = arith.subf %[[X]], %[[HI]] : f32
// CHECK: %[[PART:.*]] = linalg.index 1 : index
// CHECK: %[[ONE:.*]] = arith.constant 1 : index
// CHECK: %[[ISLO:.*]] = arith.cmpi eq, %[[PART]], %[[ONE]] : index
// CHECK: %[[SEL:.*]] = arith.select %[[ISLO]], %[[LO]], %[[HI]] : f32
// CHECK: linalg.yield %[[SEL]] : f32
// CHECK: %[[R3:.*]] = tensor.collapse_shape %[[RP]] {{\[}}[0], [1, 2]] : tensor<512x3x128xf32> into tensor<512x384xf32>
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[T]] step %{{.*}} iter_args(%[[H:.*]] = %[[H0]]) -> (tensor<?x128xf32>) {
// CHECK: %[[MIN:.*]] = arith.constant 128 : index
// CHECK: %[[ENOUGH:.*]] = arith.cmpi sge, %{{.*}}, %[[MIN]] : index
// CHECK: %[[P:.*]] = scf.if %[[ENOUGH]] -> (tensor<?x512xf32>) {
// CHECK: %[[HE:.*]] = tensor.empty(%{{.*}}) : tensor<?x3x128xf32>
// CHECK: %[[HP:.*]] = linalg.generic {{.*}} ins(%[[H]] : tensor<?x128xf32>) outs(%[[HE]] : tensor<?x3x128xf32>)
// The low part of the state is its first.
// CHECK: %[[ZERO:.*]] = arith.constant 0 : index
// CHECK: arith.cmpi eq, %{{.*}}, %[[ZERO]] : index
// CHECK: %[[H3:.*]] = tensor.collapse_shape %[[HP]] {{\[}}[0], [1, 2]] : tensor<?x3x128xf32> into tensor<?x384xf32>
// CHECK: %[[F1:.*]] = linalg.fill
// CHECK: %[[S:.*]] = linalg.generic {{.*}} ins(%[[H3]], %[[R3]] : tensor<?x384xf32>, tensor<512x384xf32>) outs(%[[F1]] : tensor<?x512xf32>) attrs = {lstm.tf32_operands}
// CHECK: scf.yield %[[S]]
// CHECK: } else {
// CHECK: %[[F2:.*]] = linalg.fill
// CHECK: %[[W:.*]] = linalg.generic {{.*}} ins(%[[H]], %[[R]] : tensor<?x128xf32>, tensor<512x128xf32>) outs(%[[F2]] : tensor<?x512xf32>) {
// CHECK: scf.yield %[[W]]
// CHECK: tensor.extract_slice %[[P]]
// CHECK: scf.yield
// Only what is outside every loop with in-loops=false: nothing here.
// OUTSIDE-LABEL: func.func @step_loop
// OUTSIDE-NOT: collapse_shape
// OUTSIDE-NOT: lstm.tf32_operands
// min-rows=256: the depth (128) is below it, whatever the rows.
// ROWS-LABEL: func.func @step_loop
// ROWS-NOT: lstm.tf32_operands
// ROWS: return
// A reduction deeper than max-depth is left alone.
// DEPTH-LABEL: func.func @step_loop
// DEPTH-NOT: lstm.tf32_operands
// DEPTH: return
func.func @step_loop(%h0: tensor<?x128xf32>, %r: tensor<512x128xf32>, %t: index) -> tensor<?x128xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %res = scf.for %i = %c0 to %t step %c1 iter_args(%h = %h0) -> (tensor<?x128xf32>) {
    %b = tensor.dim %h, %c0 : tensor<?x128xf32>
    %e = tensor.empty(%b) : tensor<?x512xf32>
    %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<?x512xf32>) -> tensor<?x512xf32>
    %p = linalg.generic {indexing_maps = [#in, #w, #acc],
                         iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%h, %r : tensor<?x128xf32>, tensor<512x128xf32>) outs(%acc : tensor<?x512xf32>) {
    ^bb0(%a: f32, %w2: f32, %o: f32):
      %m = arith.mulf %a, %w2 : f32
      %s = arith.addf %o, %m : f32
      linalg.yield %s : f32
    } -> tensor<?x512xf32>
    %next = tensor.extract_slice %p[0, 0] [%b, 128] [1, 1] : tensor<?x512xf32> to tensor<?x128xf32>
    scf.yield %next : tensor<?x128xf32>
  }
  return %res : tensor<?x128xf32>
}

// -----

// A whole sequence's product outside any loop (a hoisted input projection,
// a weight gradient), of static sizes: a batch_matmul with the weights
// transposed, each operand split along its own reduction dimension (the last
// of both), right before the product, no branch. The second product reads the
// first one's split of the weights.
#a = affine_map<(b, m, n, k) -> (b, m, k)>
#bt = affine_map<(b, m, n, k) -> (b, n, k)>
#c = affine_map<(b, m, n, k) -> (b, m, n)>
// CHECK-LABEL: func.func @sequence_products
// CHECK-SAME: (%[[X:.*]]: tensor<2x200x128xf32>, %[[Y:.*]]: tensor<2x200x128xf32>, %[[W:.*]]: tensor<2x160x128xf32>)
// CHECK-DAG: %[[WP:.*]] = linalg.generic {{.*}} ins(%[[W]] : tensor<2x160x128xf32>) outs(%{{.*}} : tensor<2x160x3x128xf32>)
// CHECK-DAG: %[[W3:.*]] = tensor.collapse_shape %[[WP]] {{\[}}[0], [1], [2, 3]] : tensor<2x160x3x128xf32> into tensor<2x160x384xf32>
// CHECK-DAG: %[[XP:.*]] = linalg.generic {{.*}} ins(%[[X]] : tensor<2x200x128xf32>) outs(%{{.*}} : tensor<2x200x3x128xf32>)
// CHECK-DAG: %[[X3:.*]] = tensor.collapse_shape %[[XP]] {{\[}}[0], [1], [2, 3]] : tensor<2x200x3x128xf32> into tensor<2x200x384xf32>
// CHECK-NOT: scf.if
// CHECK: linalg.batch_matmul {{.*}}{lstm.tf32_operands} ins(%[[X3]], %[[W3]] : tensor<2x200x384xf32>, tensor<2x160x384xf32>)
// CHECK: %[[YP:.*]] = linalg.generic {{.*}} ins(%[[Y]] : tensor<2x200x128xf32>) outs(%{{.*}} : tensor<2x200x3x128xf32>)
// CHECK: %[[Y3:.*]] = tensor.collapse_shape %[[YP]] {{\[}}[0], [1], [2, 3]] : tensor<2x200x3x128xf32> into tensor<2x200x384xf32>
// CHECK: linalg.batch_matmul {{.*}}{lstm.tf32_operands} ins(%[[Y3]], %[[W3]] : tensor<2x200x384xf32>, tensor<2x160x384xf32>)
// CHECK-NOT: tensor<2x160x3x128xf32>
// CHECK: return
// OUTSIDE-LABEL: func.func @sequence_products
// OUTSIDE-COUNT-2: lstm.tf32_operands
// Their columns (160) and depth (128) are below min-rows=256: left alone.
// ROWS-LABEL: func.func @sequence_products
// ROWS-NOT: lstm.tf32_operands
// ROWS: return
// The depth (128) is above max-depth=16: left alone.
// DEPTH-LABEL: func.func @sequence_products
// DEPTH-NOT: lstm.tf32_operands
// DEPTH: return
func.func @sequence_products(%x: tensor<2x200x128xf32>, %y: tensor<2x200x128xf32>, %w: tensor<2x160x128xf32>)
    -> (tensor<2x200x160xf32>, tensor<2x200x160xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x200x160xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<2x200x160xf32>) -> tensor<2x200x160xf32>
  %p = linalg.batch_matmul indexing_maps = [#a, #bt, #c]
      ins(%x, %w : tensor<2x200x128xf32>, tensor<2x160x128xf32>) outs(%acc : tensor<2x200x160xf32>) -> tensor<2x200x160xf32>
  %q = linalg.batch_matmul indexing_maps = [#a, #bt, #c]
      ins(%y, %w : tensor<2x200x128xf32>, tensor<2x160x128xf32>) outs(%acc : tensor<2x200x160xf32>) -> tensor<2x200x160xf32>
  return %p, %q : tensor<2x200x160xf32>, tensor<2x200x160xf32>
}

// -----

// A shallow product (depth 64, below min-rows) is left alone, however many
// its rows.
// CHECK-LABEL: func.func @shallow_product
// CHECK-NOT: lstm.tf32_operands
// CHECK: return
func.func @shallow_product(%x: tensor<2500x64xf32>, %w: tensor<512x64xf32>, %c: tensor<2500x512xf32>) -> tensor<2500x512xf32> {
  %p = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : tensor<2500x64xf32>, tensor<512x64xf32>) outs(%c : tensor<2500x512xf32>) -> tensor<2500x512xf32>
  return %p : tensor<2500x512xf32>
}

// -----

// Products of other element types are left alone.
// CHECK-LABEL: func.func @f64_product
// CHECK-NOT: lstm.tf32_operands
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<8x16xf64>, tensor<16x4xf64>)
func.func @f64_product(%a: tensor<8x16xf64>, %b: tensor<16x4xf64>, %c: tensor<8x4xf64>) -> tensor<8x4xf64> {
  %p = linalg.matmul ins(%a, %b : tensor<8x16xf64>, tensor<16x4xf64>) outs(%c : tensor<8x4xf64>) -> tensor<8x4xf64>
  return %p : tensor<8x4xf64>
}
