// RUN: lstm-opt %s --split-input-file '--lstm-hoist-by-threads=threads-function=get_threads' | FileCheck %s
// RUN: lstm-opt %s --split-input-file '--lstm-hoist-by-threads=threads-function=get_threads min-threads=5' | FileCheck %s --check-prefix=FIVE
// RUN: lstm-opt %s --split-input-file '--lstm-hoist-by-threads=threads-function=get_threads min-threads=1' | FileCheck %s --check-prefix=ONE
// RUN: not lstm-opt %s --split-input-file --lstm-hoist-by-threads 2>&1 | FileCheck %s --check-prefix=NO-FUNCTION
// RUN: not lstm-opt %s --split-input-file '--lstm-hoist-by-threads=threads-function=bad_threads' 2>&1 | FileCheck %s --check-prefix=BAD-THREADS

// An Elman cell whose input product was hoisted: the first branch (three
// threads or more, at run time) keeps the projection and the layer as they
// were; the second reads x and projects each step's slice in the cell,
// where the projection, an addend of the tanh gate, joins that gate's
// products and biases: the cell before hoisting.
// CHECK-LABEL: func.func private @get_threads() -> i32
// CHECK-LABEL: func.func @elman
// CHECK-SAME: (%[[X:.*]]: tensor<?x?x16xf32>, %[[H0:.*]]: tensor<?x32xf32>, %[[W:.*]]: tensor<32x16xf32>, %[[R:.*]]: tensor<32x32xf32>, %[[BX:.*]]: tensor<32xf32>, %[[BH:.*]]: tensor<32xf32>)
// CHECK-NOT: lstm.gate
// CHECK: %[[N:.*]] = call @get_threads() : () -> i32
// CHECK: %[[NI:.*]] = arith.index_cast %[[N]] : i32 to index
// CHECK: %[[AT_LEAST_ONE:.*]] = arith.maxsi %[[NI]], %{{.*}} : index
// CHECK: %[[HOIST:.*]] = arith.cmpi sge, %[[AT_LEAST_ONE]], %[[C3:.*]] : index
// CHECK: %[[CHOICE:.*]]:2 = scf.if %[[HOIST]] -> (tensor<?x?x32xf32>, tensor<?x32xf32>) {
// CHECK:   %[[FLAT:.*]] = tensor.collapse_shape %[[X]]
// CHECK:   %[[P:.*]] = lstm.gate identity(%[[FLAT]] : tensor<?x16xf32>) weights(%[[W]] : tensor<32x16xf32>) bias(%[[BX]] : tensor<32xf32>)
// CHECK:   %[[SEQ:.*]] = tensor.expand_shape %[[P]]
// CHECK:   %[[Y:.*]], %[[HT:.*]] = lstm.layer forward ins(%[[SEQ]] : tensor<?x?x32xf32>) init(%[[H0]] : tensor<?x32xf32>)
// CHECK:   ^bb0(%[[PT:.*]]: tensor<?x32xf32>, %[[H:.*]]: tensor<?x32xf32>):
// CHECK:     lstm.gate tanh(%[[H]] : tensor<?x32xf32>) weights(%[[R]] : tensor<32x32xf32>) add(%[[PT]] : tensor<?x32xf32>) bias(%[[BH]] : tensor<32xf32>)
// CHECK:   scf.yield %[[Y]], %[[HT]]
// CHECK: } else {
// CHECK:   %[[Y2:.*]], %[[HT2:.*]] = lstm.layer forward ins(%[[X]] : tensor<?x?x16xf32>) init(%[[H0]] : tensor<?x32xf32>)
// CHECK:   ^bb0(%[[XT:.*]]: tensor<?x16xf32>, %[[H2:.*]]: tensor<?x32xf32>):
// CHECK-NEXT: %[[G:.*]] = lstm.gate tanh(%[[XT]], %[[H2]] : tensor<?x16xf32>, tensor<?x32xf32>) weights(%[[W]], %[[R]] : tensor<32x16xf32>, tensor<32x32xf32>) bias(%[[BH]], %[[BX]] : tensor<32xf32>, tensor<32xf32>)
// CHECK-NEXT: lstm.yield out(%[[G]] : tensor<?x32xf32>) state(%[[G]] : tensor<?x32xf32>)
// CHECK:   scf.yield %[[Y2]], %[[HT2]]
// CHECK: }
// CHECK: return %[[CHOICE]]#0, %[[CHOICE]]#1
// FIVE-LABEL: func.func @elman
// FIVE: %[[C5:.*]] = arith.constant 5 : index
// FIVE: arith.cmpi sge, %{{.*}}, %[[C5]] : index
// ONE-NOT: get_threads
// ONE-NOT: scf.if
// NO-FUNCTION: error: lstm-hoist-by-threads: threads-function must name the function () -> i32 that gives the number of threads at run time
func.func @elman(%x: tensor<?x?x16xf32>, %h0: tensor<?x32xf32>, %W: tensor<32x16xf32>, %R: tensor<32x32xf32>, %bx: tensor<32xf32>, %bh: tensor<32xf32>) -> (tensor<?x?x32xf32>, tensor<?x32xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %T = tensor.dim %x, %c0 : tensor<?x?x16xf32>
  %B = tensor.dim %x, %c1 : tensor<?x?x16xf32>
  %flat = tensor.collapse_shape %x [[0, 1], [2]] : tensor<?x?x16xf32> into tensor<?x16xf32>
  %p = lstm.gate identity(%flat : tensor<?x16xf32>) weights(%W : tensor<32x16xf32>) bias(%bx : tensor<32xf32>) -> tensor<?x32xf32>
  %seq = tensor.expand_shape %p [[0, 1], [2]] output_shape [%T, %B, 32] : tensor<?x32xf32> into tensor<?x?x32xf32>
  %y, %hT = lstm.layer forward ins(%seq : tensor<?x?x32xf32>) init(%h0 : tensor<?x32xf32>) -> (tensor<?x?x32xf32>), (tensor<?x32xf32>) {
  ^bb0(%pt: tensor<?x32xf32>, %h: tensor<?x32xf32>):
    %hn = lstm.gate tanh(%h : tensor<?x32xf32>) weights(%R : tensor<32x32xf32>) add(%pt : tensor<?x32xf32>) bias(%bh : tensor<32xf32>) -> tensor<?x32xf32>
    lstm.yield out(%hn : tensor<?x32xf32>) state(%hn : tensor<?x32xf32>)
  }
  return %y, %hT : tensor<?x?x32xf32>, tensor<?x32xf32>
}

// -----

// The combined form: the projection's columns are sliced per gate, so it
// stays its own gate in the step (a product of the step's slice). A second
// sequence, not a projection, and the lengths stay what they were; the
// reverse direction too.
// CHECK-LABEL: func.func @sliced_two_inputs
// CHECK-SAME: (%[[X:.*]]: tensor<?x?x8xf32>, %[[Z:.*]]: tensor<?x?x16xf32>, %[[LEN:.*]]: tensor<?xi32>, %[[H0:.*]]: tensor<?x16xf32>, %[[W:.*]]: tensor<32x8xf32>, %[[B:.*]]: tensor<32xf32>)
// CHECK: scf.if
// CHECK:   lstm.layer reverse ins(%{{.*}}, %[[Z]] : tensor<?x?x32xf32>, tensor<?x?x16xf32>) init(%[[H0]] : tensor<?x16xf32>) lengths(%[[LEN]] : tensor<?xi32>)
// CHECK: } else {
// CHECK:   lstm.layer reverse ins(%[[X]], %[[Z]] : tensor<?x?x8xf32>, tensor<?x?x16xf32>) init(%[[H0]] : tensor<?x16xf32>) lengths(%[[LEN]] : tensor<?xi32>)
// CHECK:   ^bb0(%[[XT:.*]]: tensor<?x8xf32>, %[[ZT:.*]]: tensor<?x16xf32>, %[[H:.*]]: tensor<?x16xf32>):
// CHECK-NEXT: %[[P:.*]] = lstm.gate identity(%[[XT]] : tensor<?x8xf32>) weights(%[[W]] : tensor<32x8xf32>) bias(%[[B]] : tensor<32xf32>) -> tensor<?x32xf32>
// CHECK: tensor.extract_slice %[[P]][0, 0]
// CHECK: tensor.extract_slice %[[P]][0, 16]
// CHECK: arith.addf %{{.*}}, %[[ZT]]
func.func @sliced_two_inputs(%x: tensor<?x?x8xf32>, %z: tensor<?x?x16xf32>, %len: tensor<?xi32>, %h0: tensor<?x16xf32>, %W: tensor<32x8xf32>, %b: tensor<32xf32>) -> (tensor<?x?x16xf32>, tensor<?x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %T = tensor.dim %x, %c0 : tensor<?x?x8xf32>
  %B = tensor.dim %x, %c1 : tensor<?x?x8xf32>
  %flat = tensor.collapse_shape %x [[0, 1], [2]] : tensor<?x?x8xf32> into tensor<?x8xf32>
  %p = lstm.gate identity(%flat : tensor<?x8xf32>) weights(%W : tensor<32x8xf32>) bias(%b : tensor<32xf32>) -> tensor<?x32xf32>
  %seq = tensor.expand_shape %p [[0, 1], [2]] output_shape [%T, %B, 32] : tensor<?x32xf32> into tensor<?x?x32xf32>
  %y, %hT = lstm.layer reverse ins(%seq, %z : tensor<?x?x32xf32>, tensor<?x?x16xf32>) init(%h0 : tensor<?x16xf32>) lengths(%len : tensor<?xi32>) -> (tensor<?x?x16xf32>), (tensor<?x16xf32>) {
  ^bb0(%pt: tensor<?x32xf32>, %zt: tensor<?x16xf32>, %h: tensor<?x16xf32>):
    %c0_ = arith.constant 0 : index
    %rows = tensor.dim %pt, %c0_ : tensor<?x32xf32>
    %a = tensor.extract_slice %pt[0, 0] [%rows, 16] [1, 1] : tensor<?x32xf32> to tensor<?x16xf32>
    %g = tensor.extract_slice %pt[0, 16] [%rows, 16] [1, 1] : tensor<?x32xf32> to tensor<?x16xf32>
    %s = arith.addf %a, %zt : tensor<?x16xf32>
    %hn = arith.mulf %s, %g : tensor<?x16xf32>
    lstm.yield out(%hn : tensor<?x16xf32>) state(%hn : tensor<?x16xf32>)
  }
  return %y, %hT : tensor<?x?x16xf32>, tensor<?x16xf32>
}

// -----

// -----

// A projection read by two layers (and one made outside the loop of the
// layer that reads it) stays where it is, computed once whichever the
// branch: the first branches read it, the second ones project the steps.
// CHECK-LABEL: func.func @shared_projection
// CHECK: %[[P:.*]] = lstm.gate identity
// CHECK: %[[SEQ:.*]] = tensor.expand_shape %[[P]]
// CHECK: scf.if
// CHECK-NOT: lstm.gate identity(%{{.*}} : tensor<?x16xf32>)
// CHECK: lstm.layer forward ins(%[[SEQ]]
// CHECK: } else {
// CHECK: lstm.layer forward ins(%{{.*}} : tensor<?x?x16xf32>)
// CHECK: scf.for
// CHECK: scf.if
// CHECK-NOT: lstm.gate identity(%{{.*}} : tensor<?x16xf32>)
// CHECK: lstm.layer reverse ins(%[[SEQ]]
// CHECK: } else {
// CHECK: lstm.layer reverse ins(%{{.*}} : tensor<?x?x16xf32>)
func.func @shared_projection(%x: tensor<?x?x16xf32>, %h0: tensor<?x32xf32>, %W: tensor<32x16xf32>, %n: index) -> (tensor<?x?x32xf32>, tensor<?x32xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %T = tensor.dim %x, %c0 : tensor<?x?x16xf32>
  %B = tensor.dim %x, %c1 : tensor<?x?x16xf32>
  %flat = tensor.collapse_shape %x [[0, 1], [2]] : tensor<?x?x16xf32> into tensor<?x16xf32>
  %p = lstm.gate identity(%flat : tensor<?x16xf32>) weights(%W : tensor<32x16xf32>) -> tensor<?x32xf32>
  %seq = tensor.expand_shape %p [[0, 1], [2]] output_shape [%T, %B, 32] : tensor<?x32xf32> into tensor<?x?x32xf32>
  %y, %hT = lstm.layer forward ins(%seq : tensor<?x?x32xf32>) init(%h0 : tensor<?x32xf32>) -> (tensor<?x?x32xf32>), (tensor<?x32xf32>) {
  ^bb0(%pt: tensor<?x32xf32>, %h: tensor<?x32xf32>):
    %hn = arith.addf %pt, %h : tensor<?x32xf32>
    lstm.yield out(%hn : tensor<?x32xf32>) state(%hn : tensor<?x32xf32>)
  }
  %h = scf.for %i = %c0 to %n step %c1 iter_args(%hi = %hT) -> (tensor<?x32xf32>) {
    %y2, %hT2 = lstm.layer reverse ins(%seq : tensor<?x?x32xf32>) init(%hi : tensor<?x32xf32>) -> (tensor<?x?x32xf32>), (tensor<?x32xf32>) {
    ^bb0(%pt: tensor<?x32xf32>, %g: tensor<?x32xf32>):
      %gn = arith.mulf %pt, %g : tensor<?x32xf32>
      lstm.yield out(%gn : tensor<?x32xf32>) state(%gn : tensor<?x32xf32>)
    }
    scf.yield %hT2 : tensor<?x32xf32>
  }
  return %y, %h : tensor<?x?x32xf32>, tensor<?x32xf32>
}

// -----

// No hoisted projection: nothing changes, and the thread function is not
// declared.
// CHECK-LABEL: func.func @not_hoisted
// CHECK-NOT: get_threads
// CHECK-NOT: scf.if
// CHECK: lstm.layer forward ins(%{{.*}} : tensor<?x?x32xf32>)
// BAD-THREADS-NOT: error
func.func @not_hoisted(%x: tensor<?x?x32xf32>, %h0: tensor<?x32xf32>) -> (tensor<?x?x32xf32>, tensor<?x32xf32>) {
  %y, %hT = lstm.layer forward ins(%x : tensor<?x?x32xf32>) init(%h0 : tensor<?x32xf32>) -> (tensor<?x?x32xf32>), (tensor<?x32xf32>) {
  ^bb0(%xt: tensor<?x32xf32>, %h: tensor<?x32xf32>):
    %hn = arith.addf %xt, %h : tensor<?x32xf32>
    lstm.yield out(%hn : tensor<?x32xf32>) state(%hn : tensor<?x32xf32>)
  }
  return %y, %hT : tensor<?x?x32xf32>, tensor<?x32xf32>
}

// -----

// A symbol of the thread function's name that is not a function () -> i32.
// BAD-THREADS: error: lstm-hoist-by-threads: threads-function 'bad_threads' must be a function () -> i32
func.func private @bad_threads() -> i64
func.func @clash(%x: tensor<?x?x16xf32>, %h0: tensor<?x32xf32>, %W: tensor<32x16xf32>) -> (tensor<?x?x32xf32>, tensor<?x32xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %T = tensor.dim %x, %c0 : tensor<?x?x16xf32>
  %B = tensor.dim %x, %c1 : tensor<?x?x16xf32>
  %flat = tensor.collapse_shape %x [[0, 1], [2]] : tensor<?x?x16xf32> into tensor<?x16xf32>
  %p = lstm.gate identity(%flat : tensor<?x16xf32>) weights(%W : tensor<32x16xf32>) -> tensor<?x32xf32>
  %seq = tensor.expand_shape %p [[0, 1], [2]] output_shape [%T, %B, 32] : tensor<?x32xf32> into tensor<?x?x32xf32>
  %y, %hT = lstm.layer forward ins(%seq : tensor<?x?x32xf32>) init(%h0 : tensor<?x32xf32>) -> (tensor<?x?x32xf32>), (tensor<?x32xf32>) {
  ^bb0(%pt: tensor<?x32xf32>, %h: tensor<?x32xf32>):
    %hn = arith.addf %pt, %h : tensor<?x32xf32>
    lstm.yield out(%hn : tensor<?x32xf32>) state(%hn : tensor<?x32xf32>)
  }
  return %y, %hT : tensor<?x?x32xf32>, tensor<?x32xf32>
}
