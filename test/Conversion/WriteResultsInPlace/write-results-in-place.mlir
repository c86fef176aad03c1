// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// RUN: lstm-opt %s --lstm-write-results-in-place -split-input-file | FileCheck %s

// A step's cell (as a wavefront's diagonal computes it) whose two results go
// into loop-carried stores. The first is only stored: the generic computes
// it in the store's slice (whose extent, asked after the generic, is asked
// again before it). The second is also the next step's state, which the
// slice cannot be without a copy: the generic computes it twice, into a
// temporary for the state and into the slice for the store.
// CHECK-LABEL: func.func @cell_into_stores
// CHECK: scf.for %[[T:.*]] = {{.*}} iter_args(%[[H:.*]] = %{{.*}}, %[[SA:.*]] = %{{.*}}, %[[SH:.*]] = %{{.*}})
// CHECK: %[[E:.*]] = tensor.empty
// CHECK: %[[D:.*]] = tensor.dim %[[SA]], %c1
// CHECK: %[[A:.*]] = tensor.extract_slice %[[SA]][%[[T]], 0, 0] [1, %[[D]], 4] [1, 1, 1] : tensor<?x?x4xf32> to tensor<?x4xf32>
// CHECK: %[[HS:.*]] = tensor.extract_slice %[[SH]][%[[T]], 0, 0] [1, %{{.*}}, 4] [1, 1, 1] : tensor<?x?x4xf32> to tensor<?x4xf32>
// CHECK: %[[G:.*]]:3 = linalg.generic
// CHECK-SAME: outs(%[[A]], %[[E]], %[[HS]] :
// CHECK: linalg.yield %[[SUM:.*]], %[[TANH:.*]], %[[TANH]] : f32, f32, f32
// CHECK: tensor.insert_slice %[[G]]#0 into %[[SA]][%[[T]], 0, 0]
// CHECK: tensor.insert_slice %[[G]]#2 into %[[SH]][%[[T]], 0, 0]
// CHECK: scf.yield %[[G]]#1,
func.func @cell_into_stores(%x: tensor<?x?x4xf32>, %h0: tensor<?x4xf32>,
                            %sa0: tensor<?x?x4xf32>, %sh0: tensor<?x?x4xf32>,
                            %T: index, %B: index)
    -> (tensor<?x4xf32>, tensor<?x?x4xf32>, tensor<?x?x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r:3 = scf.for %t = %c0 to %T step %c1
      iter_args(%h = %h0, %sa = %sa0, %sh = %sh0)
      -> (tensor<?x4xf32>, tensor<?x?x4xf32>, tensor<?x?x4xf32>) {
    %xt = tensor.extract_slice %x[%t, 0, 0] [1, %B, 4] [1, 1, 1] : tensor<?x?x4xf32> to tensor<?x4xf32>
    %e = tensor.empty(%B) : tensor<?x4xf32>
    %g:2 = linalg.generic {
        indexing_maps = [affine_map<(b, n) -> (b, n)>, affine_map<(b, n) -> (b, n)>,
                         affine_map<(b, n) -> (b, n)>, affine_map<(b, n) -> (b, n)>],
        iterator_types = ["parallel", "parallel"]}
        ins(%xt, %h : tensor<?x4xf32>, tensor<?x4xf32>)
        outs(%e, %e : tensor<?x4xf32>, tensor<?x4xf32>) {
    ^bb0(%a: f32, %b: f32, %o0: f32, %o1: f32):
      %s = arith.addf %a, %b : f32
      %m = math.tanh %s : f32
      linalg.yield %s, %m : f32, f32
    } -> (tensor<?x4xf32>, tensor<?x4xf32>)
    %d = tensor.dim %sa, %c1 : tensor<?x?x4xf32>
    %ia = tensor.insert_slice %g#0 into %sa[%t, 0, 0] [1, %d, 4] [1, 1, 1] : tensor<?x4xf32> into tensor<?x?x4xf32>
    %ih = tensor.insert_slice %g#1 into %sh[%t, 0, 0] [1, %B, 4] [1, 1, 1] : tensor<?x4xf32> into tensor<?x?x4xf32>
    scf.yield %g#1, %ia, %ih : tensor<?x4xf32>, tensor<?x?x4xf32>, tensor<?x?x4xf32>
  }
  return %r#0, %r#1, %r#2 : tensor<?x4xf32>, tensor<?x?x4xf32>, tensor<?x?x4xf32>
}

// -----

// A backward step's gradient assembled from two pieces in a wider empty
// tensor, read by a product and through a reshape (as the split product
// reads it), then stored: the wider tensor starts as the store's slice (the
// pieces' own inserts are left to bufferization).
// CHECK-LABEL: func.func @pieces_into_store
// CHECK-SAME: (%[[X:.*]]: tensor<?x4xf32>, %[[W:.*]]: tensor<8x3xf32>, %[[S:.*]]: tensor<?x?x8xf32>, %[[T:.*]]: index, %[[B:.*]]: index)
// CHECK: %[[P:.*]]:2 = linalg.generic
// CHECK: %[[SL:.*]] = tensor.extract_slice %[[S]][%[[T]], 0, 0] [1, %[[B]], 8] [1, 1, 1] : tensor<?x?x8xf32> to tensor<?x8xf32>
// CHECK: %[[I0:.*]] = tensor.insert_slice %[[P]]#0 into %[[SL]][0, 0] [%[[B]], 4]
// CHECK: %[[I1:.*]] = tensor.insert_slice %[[P]]#1 into %[[I0]][0, 4] [%[[B]], 4]
// CHECK: linalg.matmul ins(%[[I1]], %[[W]]
// CHECK: %[[HALVES:.*]] = tensor.expand_shape %[[I1]]
// CHECK: linalg.generic {{.*}} ins(%[[HALVES]] :
// CHECK: tensor.insert_slice %[[I1]] into %[[S]][%[[T]], 0, 0]
func.func @pieces_into_store(%x: tensor<?x4xf32>, %w: tensor<8x3xf32>,
                             %s: tensor<?x?x8xf32>, %t: index, %B: index)
    -> (tensor<?x?x8xf32>, tensor<?x3xf32>, tensor<?x4xf32>) {
  %e4 = tensor.empty(%B) : tensor<?x4xf32>
  %e8 = tensor.empty(%B) : tensor<?x8xf32>
  %p:2 = linalg.generic {
      indexing_maps = [affine_map<(b, n) -> (b, n)>, affine_map<(b, n) -> (b, n)>,
                       affine_map<(b, n) -> (b, n)>],
      iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<?x4xf32>) outs(%e4, %e4 : tensor<?x4xf32>, tensor<?x4xf32>) {
  ^bb0(%a: f32, %o0: f32, %o1: f32):
    %n = arith.negf %a : f32
    linalg.yield %a, %n : f32, f32
  } -> (tensor<?x4xf32>, tensor<?x4xf32>)
  %i0 = tensor.insert_slice %p#0 into %e8[0, 0] [%B, 4] [1, 1] : tensor<?x4xf32> into tensor<?x8xf32>
  %i1 = tensor.insert_slice %p#1 into %i0[0, 4] [%B, 4] [1, 1] : tensor<?x4xf32> into tensor<?x8xf32>
  %e3 = tensor.empty(%B) : tensor<?x3xf32>
  %mm = linalg.matmul ins(%i1, %w : tensor<?x8xf32>, tensor<8x3xf32>) outs(%e3 : tensor<?x3xf32>) -> tensor<?x3xf32>
  %halves = tensor.expand_shape %i1 [[0], [1, 2]] output_shape [%B, 2, 4] : tensor<?x8xf32> into tensor<?x2x4xf32>
  %sum = linalg.generic {
      indexing_maps = [affine_map<(b, j, n) -> (b, j, n)>, affine_map<(b, j, n) -> (b, n)>],
      iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%halves : tensor<?x2x4xf32>) outs(%x : tensor<?x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %add = arith.addf %a, %o : f32
    linalg.yield %add : f32
  } -> tensor<?x4xf32>
  %r = tensor.insert_slice %i1 into %s[%t, 0, 0] [1, %B, 8] [1, 1, 1] : tensor<?x8xf32> into tensor<?x?x8xf32>
  return %r, %mm, %sum : tensor<?x?x8xf32>, tensor<?x3xf32>, tensor<?x4xf32>
}

// -----

// Left alone: an insert into a temporary (bufferization writes it in
// place), a value that was not built in an empty tensor (a function
// argument), a generic that reads its init (an accumulation), a value
// whose slice is not known where its computation starts (the offset comes
// from a call after it), and (below) a step of a layer, whose sequence
// the step also reads.
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: tensor.extract_slice
// CHECK: return
func.func private @offset() -> index
func.func @left_alone(%x: tensor<?x4xf32>, %s: tensor<?x?x4xf32>,
                      %t: index, %B: index)
    -> (tensor<?x8xf32>, tensor<?x?x4xf32>, tensor<?x?x4xf32>,
        tensor<?x?x4xf32>) {
  %e8 = tensor.empty(%B) : tensor<?x8xf32>
  %tmp = tensor.insert_slice %x into %e8[0, 0] [%B, 4] [1, 1] : tensor<?x4xf32> into tensor<?x8xf32>
  %arg = tensor.insert_slice %x into %s[%t, 0, 0] [1, %B, 4] [1, 1, 1] : tensor<?x4xf32> into tensor<?x?x4xf32>
  %acc = linalg.generic {
      indexing_maps = [affine_map<(b, n) -> (b, n)>, affine_map<(b, n) -> (b, n)>],
      iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<?x4xf32>) outs(%x : tensor<?x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %sum = arith.addf %a, %o : f32
    linalg.yield %sum : f32
  } -> tensor<?x4xf32>
  %accs = tensor.insert_slice %acc into %s[%t, 0, 0] [1, %B, 4] [1, 1, 1] : tensor<?x4xf32> into tensor<?x?x4xf32>
  %e4 = tensor.empty(%B) : tensor<?x4xf32>
  %neg = linalg.generic {
      indexing_maps = [affine_map<(b, n) -> (b, n)>, affine_map<(b, n) -> (b, n)>],
      iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<?x4xf32>) outs(%e4 : tensor<?x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  } -> tensor<?x4xf32>
  %late = func.call @offset() : () -> index
  %negs = tensor.insert_slice %neg into %s[%late, 0, 0] [1, %B, 4] [1, 1, 1] : tensor<?x4xf32> into tensor<?x?x4xf32>
  return %tmp, %arg, %accs, %negs : tensor<?x8xf32>, tensor<?x?x4xf32>, tensor<?x?x4xf32>, tensor<?x?x4xf32>
}

// -----

// A layer's step reads h_{t-1} from slot t of its sequence and writes h_t
// into slot t + 1: bufferization could not tell the slots apart and would
// copy what the step reads, so the sequence keeps its insert.
// CHECK-LABEL: func.func @reads_its_store
// CHECK: %[[E:.*]] = tensor.empty
// CHECK-NEXT: %[[N:.*]] = linalg.generic {{.*}} outs(%[[E]] : tensor<?x4xf32>)
// CHECK: tensor.insert_slice %[[N]] into
func.func @reads_its_store(%s0: tensor<?x?x4xf32>, %T: index, %B: index)
    -> tensor<?x?x4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %t = %c0 to %T step %c1 iter_args(%s = %s0) -> tensor<?x?x4xf32> {
    %h = tensor.extract_slice %s[%t, 0, 0] [1, %B, 4] [1, 1, 1] : tensor<?x?x4xf32> to tensor<?x4xf32>
    %e = tensor.empty(%B) : tensor<?x4xf32>
    %n = linalg.generic {
        indexing_maps = [affine_map<(b, n) -> (b, n)>, affine_map<(b, n) -> (b, n)>],
        iterator_types = ["parallel", "parallel"]}
        ins(%h : tensor<?x4xf32>) outs(%e : tensor<?x4xf32>) {
    ^bb0(%a: f32, %o: f32):
      %m = math.tanh %a : f32
      linalg.yield %m : f32
    } -> tensor<?x4xf32>
    %t1 = arith.addi %t, %c1 : index
    %w = tensor.insert_slice %n into %s[%t1, 0, 0] [1, %B, 4] [1, 1, 1] : tensor<?x4xf32> into tensor<?x?x4xf32>
    scf.yield %w : tensor<?x?x4xf32>
  }
  return %r : tensor<?x?x4xf32>
}

// -----

// An assembled value that is also returned (it would be copied out of the
// slice) and is not one generic's result: nothing to duplicate, left alone.
// CHECK-LABEL: func.func @assembled_and_returned
// CHECK-NOT: tensor.extract_slice
// CHECK: return
func.func @assembled_and_returned(%x: tensor<?x4xf32>, %s: tensor<?x?x8xf32>,
                                  %t: index, %B: index)
    -> (tensor<?x?x8xf32>, tensor<?x8xf32>) {
  %e8 = tensor.empty(%B) : tensor<?x8xf32>
  %i0 = tensor.insert_slice %x into %e8[0, 0] [%B, 4] [1, 1] : tensor<?x4xf32> into tensor<?x8xf32>
  %i1 = tensor.insert_slice %x into %i0[0, 4] [%B, 4] [1, 1] : tensor<?x4xf32> into tensor<?x8xf32>
  %r = tensor.insert_slice %i1 into %s[%t, 0, 0] [1, %B, 8] [1, 1, 1] : tensor<?x8xf32> into tensor<?x?x8xf32>
  return %r, %i1 : tensor<?x?x8xf32>, tensor<?x8xf32>
}

// -----

// A reverse wavefront's diagonal reads the previous diagonal's row of the
// store it writes (row t + 1) before computing this one's (row t): every
// read done before the value starts being computed, the value is computed
// in its row. Where the store is read after that (the second loop), the
// insert is left alone.
// CHECK-LABEL: func.func @read_row_behind
// CHECK: scf.for %[[T:.*]] = {{.*}} iter_args(%[[S:.*]] = %{{.*}})
// CHECK: %[[PREV:.*]] = tensor.extract_slice %[[S]][%{{.*}}, 0, 0] [1, %{{.*}}, 4]
// CHECK: %[[P:.*]] = linalg.matmul ins(%[[PREV]],
// CHECK: %[[ROW:.*]] = tensor.extract_slice %[[S]][%[[T]], 0, 0] [1, %{{.*}}, 4]
// CHECK: %[[G:.*]] = linalg.generic {{.*}} ins(%[[P]] : tensor<?x4xf32>) outs(%[[ROW]] : tensor<?x4xf32>)
// CHECK: tensor.insert_slice %[[G]] into %[[S]][%[[T]], 0, 0]
// CHECK: scf.for
// CHECK: %[[E:.*]] = tensor.empty
// CHECK: linalg.generic {{.*}} outs(%[[E]] : tensor<?x4xf32>)
// CHECK: tensor.insert_slice
// CHECK: linalg.matmul
func.func @read_row_behind(%s0: tensor<?x?x4xf32>, %w: tensor<4x4xf32>,
                           %T: index, %B: index)
    -> (tensor<?x?x4xf32>, tensor<?x?x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %r = scf.for %t = %c0 to %T step %c1 iter_args(%s = %s0) -> (tensor<?x?x4xf32>) {
    %t1 = arith.addi %t, %c1 : index
    %prev = tensor.extract_slice %s[%t1, 0, 0] [1, %B, 4] [1, 1, 1] : tensor<?x?x4xf32> to tensor<?x4xf32>
    %e0 = tensor.empty(%B) : tensor<?x4xf32>
    %z = linalg.fill ins(%zero : f32) outs(%e0 : tensor<?x4xf32>) -> tensor<?x4xf32>
    %p = linalg.matmul ins(%prev, %w : tensor<?x4xf32>, tensor<4x4xf32>) outs(%z : tensor<?x4xf32>) -> tensor<?x4xf32>
    %e = tensor.empty(%B) : tensor<?x4xf32>
    %g = linalg.generic {indexing_maps = [affine_map<(b, n) -> (b, n)>, affine_map<(b, n) -> (b, n)>],
                         iterator_types = ["parallel", "parallel"]}
        ins(%p : tensor<?x4xf32>) outs(%e : tensor<?x4xf32>) {
    ^bb0(%a: f32, %o: f32):
      %m = math.tanh %a : f32
      linalg.yield %m : f32
    } -> tensor<?x4xf32>
    %i = tensor.insert_slice %g into %s[%t, 0, 0] [1, %B, 4] [1, 1, 1] : tensor<?x4xf32> into tensor<?x?x4xf32>
    scf.yield %i : tensor<?x?x4xf32>
  }
  %r2 = scf.for %t = %c0 to %T step %c1 iter_args(%s = %s0) -> (tensor<?x?x4xf32>) {
    %t1 = arith.addi %t, %c1 : index
    %prev = tensor.extract_slice %s[%t1, 0, 0] [1, %B, 4] [1, 1, 1] : tensor<?x?x4xf32> to tensor<?x4xf32>
    %e = tensor.empty(%B) : tensor<?x4xf32>
    %g = linalg.generic {indexing_maps = [affine_map<(b, n) -> (b, n)>, affine_map<(b, n) -> (b, n)>],
                         iterator_types = ["parallel", "parallel"]}
        ins(%prev : tensor<?x4xf32>) outs(%e : tensor<?x4xf32>) {
    ^bb0(%a: f32, %o: f32):
      %m = math.tanh %a : f32
      linalg.yield %m : f32
    } -> tensor<?x4xf32>
    %i = tensor.insert_slice %g into %s[%t, 0, 0] [1, %B, 4] [1, 1, 1] : tensor<?x4xf32> into tensor<?x?x4xf32>
    %e0 = tensor.empty(%B) : tensor<?x4xf32>
    %z = linalg.fill ins(%zero : f32) outs(%e0 : tensor<?x4xf32>) -> tensor<?x4xf32>
    %late = linalg.matmul ins(%prev, %w : tensor<?x4xf32>, tensor<4x4xf32>) outs(%z : tensor<?x4xf32>) -> tensor<?x4xf32>
    %i2 = tensor.insert_slice %late into %i[%t1, 0, 0] [1, %B, 4] [1, 1, 1] : tensor<?x4xf32> into tensor<?x?x4xf32>
    scf.yield %i2 : tensor<?x?x4xf32>
  }
  return %r, %r2 : tensor<?x?x4xf32>, tensor<?x?x4xf32>
}
