// RUN: lstm-opt %s --lstm-split-tf32-gemms -split-input-file | FileCheck %s
// RUN: lstm-opt %s --lstm-split-tf32-gemms=in-loops=false -split-input-file | FileCheck %s --check-prefix=OUTSIDE
// RUN: lstm-opt %s --lstm-split-tf32-gemms=min-rows=256 -split-input-file | FileCheck %s --check-prefix=ROWS
// RUN: lstm-opt %s --lstm-split-tf32-gemms=max-depth=48 -split-input-file | FileCheck %s --check-prefix=DEPTH
// RUN: not lstm-opt %s --lstm-split-tf32-gemms=max-depth=0 -split-input-file 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: lstm-split-tf32-gemms: min-rows and max-depth must be at least 1 (got 128 and 0)
// RUN: not lstm-opt %s --lstm-split-tf32-gemms=min-intensity=0 -split-input-file 2>&1 | FileCheck %s --check-prefix=BADINTENSITY
// BADINTENSITY: lstm-split-tf32-gemms: min-intensity must be at least 1 and below 2^31 (got 0)
// RUN: not lstm-opt %s --lstm-split-tf32-gemms=min-loop-work=2147483648 -split-input-file 2>&1 | FileCheck %s --check-prefix=BADWORK
// BADWORK: lstm-split-tf32-gemms: min-loop-work must be at least 1 and below 2^31 (got 2147483648)
// RUN: not lstm-opt %s --lstm-split-tf32-gemms=min-part-outputs=0 -split-input-file 2>&1 | FileCheck %s --check-prefix=BADOUTPUTS
// BADOUTPUTS: lstm-split-tf32-gemms: min-part-outputs must be at least 1 and below 2^31 (got 0)
// RUN: lstm-opt %s --lstm-split-tf32-gemms="max-depth=48 min-part-outputs=4194304" -split-input-file | FileCheck %s --check-prefix=FEWOUT

// A step's product h·R^T in the time loop: R, defined outside the loop, is
// split once before it into [R_hi ; R_lo ; R_hi] along its reduction
// dimension (the part of extent 3 before it, collapsed into it), where the
// batch (the rows of h0, which the loop keeps: ValueBounds proves the rows
// of h equal to them) has at least min-rows rows and the product at least
// min-loop-work multiply-adds (2^27 = B·512·128 from B = 2048); below, an
// uninitialised buffer takes its place. The state h, a loop argument, is split once per
// step into [h_lo | h_hi | h_hi], where the step's batch passes the same
// tests (the product's columns, 512, and depth, 128, are static) and the
// test before the loop passed (R was split). The contraction reads both,
// of depth 3·128, and is marked for TF32 arithmetic; the other branch keeps
// the product as it was. The zero fill of the accumulator goes into each
// branch.
#in = affine_map<(b, h, k) -> (b, k)>
#w = affine_map<(b, h, k) -> (h, k)>
#acc = affine_map<(b, h, k) -> (b, h)>
// CHECK-DAG: #[[READ:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @step_loop
// CHECK-SAME: (%[[H0:.*]]: tensor<?x128xf32>, %[[R:.*]]: tensor<512x128xf32>, %[[T:.*]]: index)
// CHECK: %[[B0:.*]] = tensor.dim %[[H0]], %{{.*}} : tensor<?x128xf32>
// CHECK: %[[BATCHOK:.*]] = arith.cmpi sge, %[[B0]], %{{.*}} : index
// CHECK: %[[CAP:.*]] = arith.constant 134217728 : index
// CHECK: %[[CAPPED:.*]] = arith.minui %[[B0]], %[[CAP]] : index
// CHECK: %[[LEAST:.*]] = arith.constant 2048 : index
// CHECK: %[[WORK:.*]] = arith.cmpi sge, %[[CAPPED]], %[[LEAST]] : index
// CHECK: %[[BIG:.*]] = arith.andi %[[BATCHOK]], %[[WORK]] : i1
// CHECK: %[[R3:.*]] = scf.if %[[BIG]] -> (tensor<512x384xf32>) {
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
// CHECK: %[[RC:.*]] = tensor.collapse_shape %[[RP]] {{\[}}[0], [1, 2]] : tensor<512x3x128xf32> into tensor<512x384xf32>
// CHECK: scf.yield %[[RC]]
// CHECK: } else {
// CHECK-NEXT: %[[NONE:.*]] = tensor.empty() : tensor<512x384xf32>
// CHECK-NEXT: scf.yield %[[NONE]]
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[T]] step %{{.*}} iter_args(%[[H:.*]] = %[[H0]]) -> (tensor<?x128xf32>) {
// CHECK: %[[MIN:.*]] = arith.constant 128 : index
// CHECK: %[[ENOUGHROWS:.*]] = arith.cmpi sge, %{{.*}}, %[[MIN]] : index
// CHECK: %[[ENOUGHWORK:.*]] = arith.cmpi sge, %{{.*}}, %{{.*}} : index
// CHECK: %[[ENOUGH:.*]] = arith.andi %[[ENOUGHROWS]], %[[ENOUGHWORK]] : i1
// CHECK: %[[BOTH:.*]] = arith.andi %[[ENOUGH]], %[[BIG]] : i1
// CHECK: %[[P:.*]] = scf.if %[[BOTH]] -> (tensor<?x512xf32>) {
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
// In parts (max-depth=48), which run one after another, a step's product
// needs min-part-outputs=4194304 outputs too: B·512 from B = 8192, tested
// in the step with the rest.
// FEWOUT-LABEL: func.func @step_loop
// FEWOUT: scf.for
// FEWOUT: %[[LEAST:.*]] = arith.constant 8192 : index
// FEWOUT: %[[MANY:.*]] = arith.cmpi sge, %{{.*}}, %[[LEAST]] : index
// FEWOUT: %[[ALL:.*]] = arith.andi %{{.*}}, %[[MANY]] : i1
// FEWOUT: %[[BOTH:.*]] = arith.andi %[[ALL]], %{{.*}} : i1
// FEWOUT: scf.if %[[BOTH]]
// FEWOUT: lstm.tf32_operands
// OUTSIDE-LABEL: func.func @step_loop
// OUTSIDE-NOT: collapse_shape
// OUTSIDE-NOT: lstm.tf32_operands
// min-rows=256: the depth (128) is below it, whatever the rows.
// ROWS-LABEL: func.func @step_loop
// ROWS-NOT: lstm.tf32_operands
// ROWS: return
// A step's reduction deeper than max-depth=48 in parts too: the weight's
// parts are sliced and split before the loop, each behind the batch check,
// the state's in the step.
// DEPTH-LABEL: func.func @step_loop
// DEPTH-SAME: (%{{.*}}: tensor<?x128xf32>, %[[R:.*]]: tensor<512x128xf32>, %{{.*}}: index)
// DEPTH-DAG: %[[S2:.*]] = tensor.extract_slice %[[R]][0, 86] [512, 42] [1, 1]
// DEPTH-DAG: %[[S1:.*]] = tensor.extract_slice %[[R]][0, 43] [512, 43] [1, 1]
// DEPTH-DAG: %[[S0:.*]] = tensor.extract_slice %[[R]][0, 0] [512, 43] [1, 1]
// DEPTH: %[[R2:.*]] = scf.if %[[BIG:.*]] -> (tensor<512x126xf32>)
// DEPTH-NEXT: tensor.empty() : tensor<512x3x42xf32>
// DEPTH-NEXT: linalg.generic {{.*}} ins(%[[S2]] : tensor<512x42xf32>)
// DEPTH: %[[R1:.*]] = scf.if %[[BIG]] -> (tensor<512x129xf32>)
// DEPTH-NEXT: tensor.empty() : tensor<512x3x43xf32>
// DEPTH-NEXT: linalg.generic {{.*}} ins(%[[S1]] : tensor<512x43xf32>)
// DEPTH: %[[R0:.*]] = scf.if %[[BIG]] -> (tensor<512x129xf32>)
// DEPTH-NEXT: tensor.empty() : tensor<512x3x43xf32>
// DEPTH-NEXT: linalg.generic {{.*}} ins(%[[S0]] : tensor<512x43xf32>)
// DEPTH: scf.for
// DEPTH: %[[P0:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %[[R0]] : tensor<?x129xf32>, tensor<512x129xf32>) {{.*}} attrs = {lstm.tf32_operands}
// DEPTH: %[[P1:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %[[R1]] : tensor<?x129xf32>, tensor<512x129xf32>) outs(%[[P0]] : tensor<?x512xf32>) attrs = {lstm.tf32_operands}
// DEPTH: linalg.generic {{.*}} ins(%{{.*}}, %[[R2]] : tensor<?x126xf32>, tensor<512x126xf32>) outs(%[[P1]] : tensor<?x512xf32>) attrs = {lstm.tf32_operands}
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
// a weight gradient), of static sizes (1024 x 1024 by 128: 512 multiply-adds
// for each element of the operands, min-intensity's default): a batch_matmul with the weights
// transposed, each operand split along its own reduction dimension (the last
// of both), right before the product, no branch. The second product reads the
// first one's split of the weights.
#a = affine_map<(b, m, n, k) -> (b, m, k)>
#bt = affine_map<(b, m, n, k) -> (b, n, k)>
#c = affine_map<(b, m, n, k) -> (b, m, n)>
// CHECK-LABEL: func.func @sequence_products
// CHECK-SAME: (%[[X:.*]]: tensor<2x1024x128xf32>, %[[Y:.*]]: tensor<2x1024x128xf32>, %[[W:.*]]: tensor<2x1536x128xf32>)
// CHECK-DAG: %[[WP:.*]] = linalg.generic {{.*}} ins(%[[W]] : tensor<2x1536x128xf32>) outs(%{{.*}} : tensor<2x1536x3x128xf32>)
// CHECK-DAG: %[[W3:.*]] = tensor.collapse_shape %[[WP]] {{\[}}[0], [1], [2, 3]] : tensor<2x1536x3x128xf32> into tensor<2x1536x384xf32>
// CHECK-DAG: %[[XP:.*]] = linalg.generic {{.*}} ins(%[[X]] : tensor<2x1024x128xf32>) outs(%{{.*}} : tensor<2x1024x3x128xf32>)
// CHECK-DAG: %[[X3:.*]] = tensor.collapse_shape %[[XP]] {{\[}}[0], [1], [2, 3]] : tensor<2x1024x3x128xf32> into tensor<2x1024x384xf32>
// CHECK-NOT: scf.if
// CHECK: linalg.batch_matmul {{.*}}{lstm.tf32_operands} ins(%[[X3]], %[[W3]] : tensor<2x1024x384xf32>, tensor<2x1536x384xf32>)
// CHECK: %[[YP:.*]] = linalg.generic {{.*}} ins(%[[Y]] : tensor<2x1024x128xf32>) outs(%{{.*}} : tensor<2x1024x3x128xf32>)
// CHECK: %[[Y3:.*]] = tensor.collapse_shape %[[YP]] {{\[}}[0], [1], [2, 3]] : tensor<2x1024x3x128xf32> into tensor<2x1024x384xf32>
// CHECK: linalg.batch_matmul {{.*}}{lstm.tf32_operands} ins(%[[Y3]], %[[W3]] : tensor<2x1024x384xf32>, tensor<2x1536x384xf32>)
// CHECK-NOT: tensor<2x1536x3x128xf32>
// CHECK: return
// OUTSIDE-LABEL: func.func @sequence_products
// OUTSIDE-COUNT-2: lstm.tf32_operands
// In parts (max-depth=48), 2·1024·1536 outputs are below
// min-part-outputs=4194304: left alone.
// FEWOUT-LABEL: func.func @sequence_products
// FEWOUT-NOT: lstm.tf32_operands
// FEWOUT: return
// Their depth (128) is below min-rows=256: left alone.
// ROWS-LABEL: func.func @sequence_products
// ROWS-NOT: lstm.tf32_operands
// ROWS: return
// The depth (128) is above max-depth=48: three parts of 43, 43 and 42
// terms, each split and multiplied in TF32, the first into the zero fill,
// the others into the part before.
// DEPTH-LABEL: func.func @sequence_products
// DEPTH-SAME: (%[[X:.*]]: tensor<2x1024x128xf32>, %{{.*}}: tensor<2x1024x128xf32>, %[[W:.*]]: tensor<2x1536x128xf32>)
// DEPTH: %[[FILL:.*]] = linalg.fill
// DEPTH: tensor.extract_slice %[[X]][0, 0, 0] [2, 1024, 43] [1, 1, 1]
// DEPTH: tensor.extract_slice %[[W]][0, 0, 0] [2, 1536, 43] [1, 1, 1]
// DEPTH: %[[P0:.*]] = linalg.batch_matmul {{.*}}{lstm.tf32_operands} ins(%{{.*}}, %{{.*}} : tensor<2x1024x129xf32>, tensor<2x1536x129xf32>) outs(%[[FILL]] : tensor<2x1024x1536xf32>)
// DEPTH: tensor.extract_slice %[[X]][0, 0, 43] [2, 1024, 43] [1, 1, 1]
// DEPTH: tensor.extract_slice %[[W]][0, 0, 43] [2, 1536, 43] [1, 1, 1]
// DEPTH: %[[P1:.*]] = linalg.batch_matmul {{.*}}{lstm.tf32_operands} ins(%{{.*}}, %{{.*}} : tensor<2x1024x129xf32>, tensor<2x1536x129xf32>) outs(%[[P0]] : tensor<2x1024x1536xf32>)
// DEPTH: tensor.extract_slice %[[X]][0, 0, 86] [2, 1024, 42] [1, 1, 1]
// DEPTH: tensor.extract_slice %[[W]][0, 0, 86] [2, 1536, 42] [1, 1, 1]
// DEPTH: %[[P2:.*]] = linalg.batch_matmul {{.*}}{lstm.tf32_operands} ins(%{{.*}}, %{{.*}} : tensor<2x1024x126xf32>, tensor<2x1536x126xf32>) outs(%[[P1]] : tensor<2x1024x1536xf32>)
// DEPTH: return %[[P2]],
func.func @sequence_products(%x: tensor<2x1024x128xf32>, %y: tensor<2x1024x128xf32>, %w: tensor<2x1536x128xf32>)
    -> (tensor<2x1024x1536xf32>, tensor<2x1024x1536xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x1024x1536xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<2x1024x1536xf32>) -> tensor<2x1024x1536xf32>
  %p = linalg.batch_matmul indexing_maps = [#a, #bt, #c]
      ins(%x, %w : tensor<2x1024x128xf32>, tensor<2x1536x128xf32>) outs(%acc : tensor<2x1024x1536xf32>) -> tensor<2x1024x1536xf32>
  %q = linalg.batch_matmul indexing_maps = [#a, #bt, #c]
      ins(%y, %w : tensor<2x1024x128xf32>, tensor<2x1536x128xf32>) outs(%acc : tensor<2x1024x1536xf32>) -> tensor<2x1024x1536xf32>
  return %p, %q : tensor<2x1024x1536xf32>, tensor<2x1024x1536xf32>
}

// -----

// A weight gradient dG^T·X (2048 x 1024: 682 multiply-adds for each element
// of the operands), its depth (the steps times the batch) known at run time. Where it reaches min-rows, it is cut into ceil(depth / 1024)
// parts of equal depth (the last shorter): the first part's product goes
// into the zero fill (moved after the splits, next to the product, where
// lstm-gemm-to-cublas folds it into beta = 0), a loop adds the others'.
// Each part's operands are split along the rows they share; dG^T's low part
// comes first. Below min-rows, the product as it was.
#km = affine_map<(m, n, k) -> (k, m)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>
// In parts (max-depth=48), which run one after another, the 2048 x 1024
// outputs are below min-part-outputs=4194304: split only where the depth,
// T·B at run time, makes one part (at most 48 terms: never with the 128
// rows that min-rows asks, but the pass does not reason so far).
// FEWOUT-LABEL: func.func @weight_gradient
// FEWOUT: %[[TB:.*]] = tensor.dim
// FEWOUT: %[[ROWSOK:.*]] = arith.cmpi sge, %[[TB]], %c128 : index
// FEWOUT: %[[ONEPART:.*]] = arith.cmpi ule, %[[TB]], %c48 : index
// FEWOUT: %[[BOTH:.*]] = arith.andi %[[ROWSOK]], %[[ONEPART]] : i1
// FEWOUT: scf.if %[[BOTH]]
// CHECK-LABEL: func.func @weight_gradient
// CHECK-SAME: (%[[DG:.*]]: tensor<?x2048xf32>, %[[X:.*]]: tensor<?x1024xf32>)
// CHECK: %[[E:.*]] = tensor.empty() : tensor<2048x1024xf32>
// CHECK-NOT: linalg.fill
// CHECK: %[[K:.*]] = tensor.dim %[[DG]], %{{.*}} : tensor<?x2048xf32>
// CHECK: %[[DEEP:.*]] = arith.cmpi sge, %[[K]], %{{.*}} : index
// CHECK: %[[R:.*]] = scf.if %[[DEEP]] -> (tensor<2048x1024xf32>) {
// CHECK: %[[MAX:.*]] = arith.constant 1024 : index
// CHECK: %[[CEIL:.*]] = arith.ceildivui %[[K2:.*]], %[[MAX]] : index
// CHECK: %[[PARTS:.*]] = arith.maxui %[[CEIL]], %{{.*}} : index
// CHECK: %[[PART:.*]] = arith.ceildivui %[[K2]], %[[PARTS]] : index
// CHECK: %[[FIRST:.*]] = arith.minui %[[PART]], %[[K2]] : index
// CHECK: %[[DG0:.*]] = tensor.extract_slice %[[DG]][0, 0] [%[[FIRST]], 2048] [1, 1]
// CHECK: %[[X0:.*]] = tensor.extract_slice %[[X]][0, 0] [%[[FIRST]], 1024] [1, 1]
// CHECK: linalg.generic {{.*}} ins(%[[DG0]] : tensor<?x2048xf32>) outs(%{{.*}} : tensor<3x?x2048xf32>)
// CHECK: arith.cmpi eq, %{{.*}}, %[[LO0:c0.*]] : index
// CHECK: %[[DG3:.*]] = tensor.collapse_shape %{{.*}} {{\[}}[0, 1], [2]] : tensor<3x?x2048xf32> into tensor<?x2048xf32>
// CHECK: linalg.generic {{.*}} ins(%[[X0]] : tensor<?x1024xf32>) outs(%{{.*}} : tensor<3x?x1024xf32>)
// CHECK: %[[X3:.*]] = tensor.collapse_shape
// CHECK-NEXT: %[[FILL:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E]] : tensor<2048x1024xf32>)
// CHECK-NEXT: %[[P0:.*]] = linalg.generic {{.*}} ins(%[[DG3]], %[[X3]] : tensor<?x2048xf32>, tensor<?x1024xf32>) outs(%[[FILL]] : tensor<2048x1024xf32>) attrs = {lstm.tf32_operands}
// CHECK: %[[SUM:.*]] = scf.for %[[AT:.*]] = %[[PART]] to %[[K2]] step %[[PART]] iter_args(%[[ACC:.*]] = %[[P0]])
// CHECK: tensor.extract_slice %[[DG]][%[[AT]], 0]
// CHECK: tensor.extract_slice %[[X]][%[[AT]], 0]
// CHECK: %[[P:.*]] = linalg.generic {{.*}} outs(%[[ACC]] : tensor<2048x1024xf32>) attrs = {lstm.tf32_operands}
// CHECK: scf.yield %[[P]]
// CHECK: scf.yield %[[SUM]]
// CHECK: } else {
// CHECK-NEXT: %[[F2:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E]] : tensor<2048x1024xf32>)
// CHECK-NEXT: %[[W:.*]] = linalg.generic {{.*}} ins(%[[DG]], %[[X]] : tensor<?x2048xf32>, tensor<?x1024xf32>) outs(%[[F2]] : tensor<2048x1024xf32>) {
// CHECK: scf.yield %[[W]]
// CHECK: return %[[R]]
// In a loop's body it would be left alone: in-loops=false changes nothing.
// OUTSIDE-LABEL: func.func @weight_gradient
// OUTSIDE: lstm.tf32_operands
// min-rows=256: the depth's check against it.
// ROWS-LABEL: func.func @weight_gradient
// ROWS: %[[K:.*]] = tensor.dim
// ROWS-NEXT: %[[LEAST:.*]] = arith.constant 256 : index
// ROWS-NEXT: arith.cmpi sge, %[[K]], %[[LEAST]] : index
// ROWS: lstm.tf32_operands
func.func @weight_gradient(%dg: tensor<?x2048xf32>, %x: tensor<?x1024xf32>) -> tensor<2048x1024xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2048x1024xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<2048x1024xf32>) -> tensor<2048x1024xf32>
  %p = linalg.generic {indexing_maps = [#km, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%dg, %x : tensor<?x2048xf32>, tensor<?x1024xf32>) outs(%acc : tensor<2048x1024xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<2048x1024xf32>
  return %p : tensor<2048x1024xf32>
}

// -----

// A weight gradient of 2048 x 512 (appleyard's dW): 410 multiply-adds for
// each element of the operands that the splits read and write, below
// min-intensity (512): left alone, whatever T·B.
// CHECK-LABEL: func.func @low_intensity
// CHECK-NOT: lstm.tf32_operands
// CHECK: return
func.func @low_intensity(%dg: tensor<?x2048xf32>, %x: tensor<?x512xf32>) -> tensor<2048x512xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2048x512xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<2048x512xf32>) -> tensor<2048x512xf32>
  %p = linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>],
                       iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%dg, %x : tensor<?x2048xf32>, tensor<?x512xf32>) outs(%acc : tensor<2048x512xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<2048x512xf32>
  return %p : tensor<2048x512xf32>
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

// -----

// A step's product whose batch the loop carries in two states that trade
// their rows each step: ValueBounds cannot tie the product's rows to the
// function's arguments through the loop, so the test before the loop that
// guards R's split reads the rows of the product's state as the loop
// starts (%a0's), and the step's product takes the split version only
// where both that test and its own (the rows of %a at that step) pass: a
// step whose rows differ from %a0's never reads a split that was not made.
#in2 = affine_map<(b, h, k) -> (b, k)>
#w2 = affine_map<(b, h, k) -> (h, k)>
#acc2 = affine_map<(b, h, k) -> (b, h)>
// CHECK-LABEL: func.func @traded_rows
// CHECK-SAME: (%[[A0:.*]]: tensor<?x128xf32>, %{{.*}}: tensor<?x128xf32>, %[[R:.*]]: tensor<512x128xf32>, %{{.*}}: index)
// CHECK: %[[START:.*]] = tensor.dim %[[A0]], %{{.*}} : tensor<?x128xf32>
// CHECK: %[[STARTROWS:.*]] = arith.cmpi sge, %[[START]], %{{.*}} : index
// CHECK: %[[STARTOK:.*]] = arith.andi %[[STARTROWS]], %{{.*}} : i1
// CHECK: %[[R3:.*]] = scf.if %[[STARTOK]] -> (tensor<512x384xf32>) {
// CHECK: linalg.generic {{.*}} ins(%[[R]] : tensor<512x128xf32>)
// CHECK: scf.for %{{.*}} iter_args(%[[A:.*]] = %[[A0]], %{{.*}} = %{{.*}})
// CHECK: %[[AROWS:.*]] = tensor.dim %[[A]], %{{.*}} : tensor<?x128xf32>
// CHECK: %[[ROWSOK:.*]] = arith.cmpi sge, %[[AROWS]], %{{.*}} : index
// CHECK: %[[STEPOK:.*]] = arith.andi %[[ROWSOK]], %{{.*}} : i1
// CHECK: %[[BOTH:.*]] = arith.andi %[[STEPOK]], %[[STARTOK]] : i1
// CHECK: scf.if %[[BOTH]] -> (tensor<?x512xf32>) {
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[R3]] : tensor<?x384xf32>, tensor<512x384xf32>) {{.*}} attrs = {lstm.tf32_operands}
// CHECK: } else {
// CHECK: linalg.generic {{.*}} ins(%[[A]], %[[R]] : tensor<?x128xf32>, tensor<512x128xf32>)
// CHECK: return
func.func @traded_rows(%a0: tensor<?x128xf32>, %b0: tensor<?x128xf32>, %r: tensor<512x128xf32>, %t: index) -> tensor<?x128xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %res:2 = scf.for %i = %c0 to %t step %c1 iter_args(%a = %a0, %b = %b0) -> (tensor<?x128xf32>, tensor<?x128xf32>) {
    %n = tensor.dim %b, %c0 : tensor<?x128xf32>
    %e = tensor.empty(%n) : tensor<?x512xf32>
    %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<?x512xf32>) -> tensor<?x512xf32>
    %p = linalg.generic {indexing_maps = [#in2, #w2, #acc2],
                         iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%a, %r : tensor<?x128xf32>, tensor<512x128xf32>) outs(%acc : tensor<?x512xf32>) {
    ^bb0(%x: f32, %w: f32, %o: f32):
      %m = arith.mulf %x, %w : f32
      %s = arith.addf %o, %m : f32
      linalg.yield %s : f32
    } -> tensor<?x512xf32>
    %next = tensor.extract_slice %p[0, 0] [%n, 128] [1, 1] : tensor<?x512xf32> to tensor<?x128xf32>
    scf.yield %b, %next : tensor<?x128xf32>, tensor<?x128xf32>
  }
  return %res#0 : tensor<?x128xf32>
}

// -----

// A step's product whose rows come from a loop state that starts with a
// number read from memory (a tensor.extract), which neither ValueBounds nor
// the loops' initial states tie to the function's arguments: no test of the
// batch can be built before the loop to guard R's split there, and the
// product is left alone.
#in3 = affine_map<(b, h, k) -> (b, k)>
#w3 = affine_map<(b, h, k) -> (h, k)>
#acc3 = affine_map<(b, h, k) -> (b, h)>
// CHECK-LABEL: func.func @rows_from_memory
// CHECK-NOT: lstm.tf32_operands
// CHECK: return
func.func @rows_from_memory(%sizes: tensor<1xindex>, %r: tensor<512x128xf32>, %t: index) -> tensor<?x128xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %rows = tensor.extract %sizes[%c0] : tensor<1xindex>
  %h0 = tensor.empty(%rows) : tensor<?x128xf32>
  %res = scf.for %i = %c0 to %t step %c1 iter_args(%h = %h0) -> (tensor<?x128xf32>) {
    %b = tensor.dim %h, %c0 : tensor<?x128xf32>
    %e = tensor.empty(%b) : tensor<?x512xf32>
    %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<?x512xf32>) -> tensor<?x512xf32>
    %p = linalg.generic {indexing_maps = [#in3, #w3, #acc3],
                         iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%h, %r : tensor<?x128xf32>, tensor<512x128xf32>) outs(%acc : tensor<?x512xf32>) {
    ^bb0(%x: f32, %w: f32, %o: f32):
      %m = arith.mulf %x, %w : f32
      %s = arith.addf %o, %m : f32
      linalg.yield %s : f32
    } -> tensor<?x512xf32>
    %next = tensor.extract_slice %p[0, 0] [%b, 128] [1, 1] : tensor<?x512xf32> to tensor<?x128xf32>
    scf.yield %next : tensor<?x128xf32>
  }
  return %res : tensor<?x128xf32>
}
