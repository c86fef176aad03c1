// RUN: lstm-opt %s --split-input-file '--lstm-split-batch=threads-function=get_threads' | FileCheck %s
// RUN: lstm-opt %s --split-input-file '--lstm-split-batch=threads-function=get_threads min-rows=4' | FileCheck %s --check-prefix=ROWS
// RUN: lstm-opt %s --split-input-file '--lstm-split-batch=threads-function=get_threads max-weight-bytes=4095' | FileCheck %s --check-prefix=SMALL
// RUN: lstm-opt %s --split-input-file '--lstm-split-batch=threads-function=get_threads max-weight-bytes=4095 large-weight-min-rows=6' | FileCheck %s --check-prefix=LARGE
// RUN: not lstm-opt %s --split-input-file --lstm-split-batch 2>&1 | FileCheck %s --check-prefix=NO-FUNCTION
// RUN: not lstm-opt %s --split-input-file '--lstm-split-batch=threads-function=get_threads large-weight-min-rows=-1' 2>&1 | FileCheck %s --check-prefix=NEGATIVE-LARGE
// RUN: not lstm-opt %s --split-input-file '--lstm-split-batch=threads-function=get_threads min-part-work=0' 2>&1 | FileCheck %s --check-prefix=NO-WORK
// RUN: not lstm-opt %s --split-input-file '--lstm-split-batch=threads-function=get_threads min-rows=0' 2>&1 | FileCheck %s --check-prefix=NO-ROWS

// An Elman layer with lengths: an scf.forall over min(threads, B / min-rows,
// T · B · 1536 weight elements / min-part-work) parts (each at least one),
// part k the layer on rows [k·B/n, (k+1)·B/n) of its
// sequence, initial state and lengths, its output and final state inserted
// into whole ones of their own (alloc_tensor). Its weights are
// 32·16 + 32·32 floats, 6144 bytes: over max-weight-bytes=4095 it stays
// whole.
// CHECK-LABEL: func.func private @get_threads() -> i32
// CHECK-LABEL: func.func @elman
// CHECK-SAME: (%[[X:.*]]: tensor<?x?x16xf32>, %[[H0:.*]]: tensor<?x32xf32>, %[[LEN:.*]]: tensor<?xi32>
// CHECK: %[[TB:.*]] = arith.muli %{{.*}}, %{{.*}} : index
// CHECK: %[[WORK:.*]] = arith.muli %[[TB]], %c1536{{.*}} : index
// CHECK: %[[PER_WORK:.*]] = arith.divsi %[[WORK]], %c262144{{.*}} : index
// CHECK: %[[BY_WORK:.*]] = arith.maxsi %[[PER_WORK]], %{{.*}} : index
// CHECK: %[[PER:.*]] = arith.divsi %{{.*}}, %{{.*}} : index
// CHECK: %[[BY_ROWS:.*]] = arith.maxsi %[[PER]], %{{.*}} : index
// CHECK: %[[N:.*]] = call @get_threads() : () -> i32
// CHECK: %[[NI:.*]] = arith.index_cast %[[N]] : i32 to index
// CHECK: %[[THREADS:.*]] = arith.maxsi %[[NI]], %{{.*}} : index
// CHECK: %[[SOME:.*]] = arith.minsi %[[THREADS]], %[[BY_ROWS]] : index
// CHECK: %[[PARTS:.*]] = arith.minsi %[[SOME]], %[[BY_WORK]] : index
// CHECK: %[[WY:.*]] = bufferization.alloc_tensor(%{{.*}}, %{{.*}}) : tensor<?x?x32xf32>
// CHECK: %[[WH:.*]] = bufferization.alloc_tensor(%{{.*}}) : tensor<?x32xf32>
// CHECK: %[[R:.*]]:2 = scf.forall (%[[K:.*]]) in (%[[PARTS]]) shared_outs(%[[OY:.*]] = %[[WY]], %[[OH:.*]] = %[[WH]])
// CHECK:   %[[KB:.*]] = arith.muli %[[K]], %[[B:.*]] : index
// CHECK:   %[[LO:.*]] = arith.divsi %[[KB]], %[[PARTS]] : index
// CHECK:   %[[K1:.*]] = arith.addi %[[K]], %{{.*}} : index
// CHECK:   %[[K1B:.*]] = arith.muli %[[K1]], %[[B]] : index
// CHECK:   %[[HI:.*]] = arith.divsi %[[K1B]], %[[PARTS]] : index
// CHECK:   %[[M:.*]] = arith.subi %[[HI]], %[[LO]] : index
// CHECK:   %[[XS:.*]] = tensor.extract_slice %[[X]][0, %[[LO]], 0] [%{{.*}}, %[[M]], 16] [1, 1, 1]
// CHECK:   %[[HS:.*]] = tensor.extract_slice %[[H0]][%[[LO]], 0] [%[[M]], 32] [1, 1]
// CHECK:   %[[LS:.*]] = tensor.extract_slice %[[LEN]][%[[LO]]] [%[[M]]] [1]
// CHECK:   %[[Y:.*]], %[[HT:.*]] = lstm.layer forward ins(%[[XS]] : tensor<?x?x16xf32>) init(%[[HS]] : tensor<?x32xf32>) lengths(%[[LS]] : tensor<?xi32>)
// CHECK:     lstm.gate tanh
// CHECK:   scf.forall.in_parallel
// CHECK:     tensor.parallel_insert_slice %[[Y]] into %[[OY]][0, %[[LO]], 0] [%{{.*}}, %[[M]], 32] [1, 1, 1]
// CHECK:     tensor.parallel_insert_slice %[[HT]] into %[[OH]][%[[LO]], 0] [%[[M]], 32] [1, 1]
// CHECK: return %[[R]]#0, %[[R]]#1
// ROWS-LABEL: func.func @elman
// ROWS: %[[C4:.*]] = arith.constant 4 : index
// ROWS: arith.divsi %{{.*}}, %[[C4]] : index
// ROWS: scf.forall
// SMALL-LABEL: func.func @elman
// SMALL-NOT: scf.forall
// SMALL: lstm.layer
// With large-weight-min-rows, a layer over max-weight-bytes is split in
// parts of at least that many rows.
// LARGE-LABEL: func.func @elman
// LARGE: %[[C6:.*]] = arith.constant 6 : index
// LARGE: arith.divsi %{{.*}}, %[[C6]] : index
// LARGE: scf.forall
// NO-FUNCTION: lstm-split-batch: threads-function must name the function () -> i32
// NEGATIVE-LARGE: lstm-split-batch: large-weight-min-rows must be >= 0, got -1
// NO-WORK: lstm-split-batch: min-part-work must be >= 1, got 0
// NO-ROWS: lstm-split-batch: min-rows must be >= 1, got 0
func.func @elman(%x: tensor<?x?x16xf32>, %h0: tensor<?x32xf32>, %len: tensor<?xi32>,
                 %W: tensor<32x16xf32>, %R: tensor<32x32xf32>, %b: tensor<32xf32>)
    -> (tensor<?x?x32xf32>, tensor<?x32xf32>) {
  %y, %hT = lstm.layer forward ins(%x : tensor<?x?x16xf32>) init(%h0 : tensor<?x32xf32>)
      lengths(%len : tensor<?xi32>) -> (tensor<?x?x32xf32>), (tensor<?x32xf32>) {
  ^bb0(%xt: tensor<?x16xf32>, %h: tensor<?x32xf32>):
    %hn = lstm.gate tanh (%xt, %h : tensor<?x16xf32>, tensor<?x32xf32>)
        weights(%W, %R : tensor<32x16xf32>, tensor<32x32xf32>)
        bias(%b : tensor<32xf32>) -> tensor<?x32xf32>
    lstm.yield out(%hn : tensor<?x32xf32>) state(%hn : tensor<?x32xf32>)
  }
  return %y, %hT : tensor<?x?x32xf32>, tensor<?x32xf32>
}

// -----

// Row-wise ops the split accepts: element-wise ops on batch values, a
// pointwise op with a broadcast [N] operand, one_minus, a slice of a state's
// columns that keeps every row (its size the state's batch extent), a
// concatenation of columns. The layer is split.
// CHECK-LABEL: func.func @rowwise
// CHECK: scf.forall
// CHECK: lstm.layer
func.func @rowwise(%x: tensor<?x?x8xf32>, %h0: tensor<?x16xf32>, %W: tensor<16x8xf32>,
                   %R: tensor<16x16xf32>, %p: tensor<16xf32>) -> tensor<?x?x16xf32> {
  %c0 = arith.constant 0 : index
  %y, %hT = lstm.layer forward ins(%x : tensor<?x?x8xf32>) init(%h0 : tensor<?x16xf32>)
      -> (tensor<?x?x16xf32>), (tensor<?x16xf32>) {
  ^bb0(%xt: tensor<?x8xf32>, %h: tensor<?x16xf32>):
    %g = lstm.gate sigmoid (%xt, %h : tensor<?x8xf32>, tensor<?x16xf32>)
        weights(%W, %R : tensor<16x8xf32>, tensor<16x16xf32>) -> tensor<?x16xf32>
    %z = lstm.one_minus %g : tensor<?x16xf32>
    %b = tensor.dim %h, %c0 : tensor<?x16xf32>
    %left = tensor.extract_slice %h[0, 0] [%b, 8] [1, 1] : tensor<?x16xf32> to tensor<?x8xf32>
    %right = tensor.extract_slice %z[0, 8] [%b, 8] [1, 1] : tensor<?x16xf32> to tensor<?x8xf32>
    %both = tensor.concat dim(1) %left, %right : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x16xf32>
    %s = arith.mulf %both, %g : tensor<?x16xf32>
    %hn = lstm.pointwise ins(%s, %p : tensor<?x16xf32>, tensor<16xf32>) -> tensor<?x16xf32> {
    ^bb0(%vs: f32, %vp: f32):
      %v = arith.addf %vs, %vp : f32
      lstm.pointwise_yield %v : f32
    }
    lstm.yield out(%hn : tensor<?x16xf32>) state(%hn : tensor<?x16xf32>)
  }
  return %y : tensor<?x?x16xf32>
}

// -----

// Not row-wise: a slice of the first row (every row would read another
// part's first row), a value from above of the batch's extent mixed into
// the state, a state sliced along the batch.
// CHECK-LABEL: func.func @first_row
// CHECK-NOT: scf.forall
// CHECK: lstm.layer
func.func @first_row(%x: tensor<?x?x8xf32>, %h0: tensor<?x8xf32>, %R: tensor<8x8xf32>)
    -> tensor<?x?x8xf32> {
  %y, %hT = lstm.layer forward ins(%x : tensor<?x?x8xf32>) init(%h0 : tensor<?x8xf32>)
      -> (tensor<?x?x8xf32>), (tensor<?x8xf32>) {
  ^bb0(%xt: tensor<?x8xf32>, %h: tensor<?x8xf32>):
    %row = tensor.extract_slice %h[0, 0] [1, 8] [1, 1] : tensor<?x8xf32> to tensor<1x8xf32>
    %wide = tensor.cast %row : tensor<1x8xf32> to tensor<?x8xf32>
    %g = lstm.gate tanh (%wide : tensor<?x8xf32>) weights(%R : tensor<8x8xf32>)
        add(%xt : tensor<?x8xf32>) -> tensor<?x8xf32>
    lstm.yield out(%g : tensor<?x8xf32>) state(%g : tensor<?x8xf32>)
  }
  return %y : tensor<?x?x8xf32>
}

// -----

// CHECK-LABEL: func.func @from_above
// CHECK-NOT: scf.forall
// CHECK: lstm.layer
func.func @from_above(%x: tensor<?x?x8xf32>, %h0: tensor<?x8xf32>, %mask: tensor<?x8xf32>,
                      %R: tensor<8x8xf32>) -> tensor<?x?x8xf32> {
  %y, %hT = lstm.layer forward ins(%x : tensor<?x?x8xf32>) init(%h0 : tensor<?x8xf32>)
      -> (tensor<?x?x8xf32>), (tensor<?x8xf32>) {
  ^bb0(%xt: tensor<?x8xf32>, %h: tensor<?x8xf32>):
    %g = lstm.gate tanh (%h : tensor<?x8xf32>) weights(%R : tensor<8x8xf32>)
        add(%xt : tensor<?x8xf32>) -> tensor<?x8xf32>
    %m = arith.mulf %g, %mask : tensor<?x8xf32>
    lstm.yield out(%m : tensor<?x8xf32>) state(%m : tensor<?x8xf32>)
  }
  return %y : tensor<?x?x8xf32>
}

// -----

// f64 layers stay whole (their products go to OpenBLAS, threaded itself),
// as do layers with a static batch (the cell's types would not fit a part).
// CHECK-LABEL: func.func @f64
// CHECK-NOT: scf.forall
// CHECK: lstm.layer
// CHECK-LABEL: func.func @static_batch
// CHECK-NOT: scf.forall
// CHECK: lstm.layer
func.func @f64(%x: tensor<?x?x8xf64>, %h0: tensor<?x8xf64>, %R: tensor<8x8xf64>)
    -> tensor<?x?x8xf64> {
  %y, %hT = lstm.layer forward ins(%x : tensor<?x?x8xf64>) init(%h0 : tensor<?x8xf64>)
      -> (tensor<?x?x8xf64>), (tensor<?x8xf64>) {
  ^bb0(%xt: tensor<?x8xf64>, %h: tensor<?x8xf64>):
    %g = lstm.gate tanh (%h : tensor<?x8xf64>) weights(%R : tensor<8x8xf64>)
        add(%xt : tensor<?x8xf64>) -> tensor<?x8xf64>
    lstm.yield out(%g : tensor<?x8xf64>) state(%g : tensor<?x8xf64>)
  }
  return %y : tensor<?x?x8xf64>
}
func.func @static_batch(%x: tensor<?x4x8xf32>, %h0: tensor<4x8xf32>, %R: tensor<8x8xf32>)
    -> tensor<?x4x8xf32> {
  %y, %hT = lstm.layer forward ins(%x : tensor<?x4x8xf32>) init(%h0 : tensor<4x8xf32>)
      -> (tensor<?x4x8xf32>), (tensor<4x8xf32>) {
  ^bb0(%xt: tensor<4x8xf32>, %h: tensor<4x8xf32>):
    %g = lstm.gate tanh (%h : tensor<4x8xf32>) weights(%R : tensor<8x8xf32>)
        add(%xt : tensor<4x8xf32>) -> tensor<4x8xf32>
    lstm.yield out(%g : tensor<4x8xf32>) state(%g : tensor<4x8xf32>)
  }
  return %y : tensor<?x4x8xf32>
}
