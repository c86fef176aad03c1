// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// RUN: lstm-opt %s --lstm-write-sequences-in-place -split-input-file | FileCheck %s

// Two layers' sequences go into one store (as the layers' branch of a
// wavefront's batch bound fills it). The second loop starts from the
// store's slice instead of an allocation of its own (the extent asked of
// its result stays as it is); the first, whose result the second reads,
// keeps its allocation.
// CHECK-LABEL: func.func @into_store
// CHECK-SAME: (%[[X:.*]]: tensor<?x?x4xf32>, %[[T:.*]]: index, %[[B:.*]]: index)
// CHECK: %[[STORE:.*]] = bufferization.alloc_tensor
// CHECK-NEXT: %[[A0:.*]] = bufferization.alloc_tensor(%[[T]], %[[B]]) : tensor<?x?x4xf32>
// CHECK: %[[L0:.*]] = scf.for {{.*}} iter_args(%{{.*}} = %[[A0]])
// CHECK: %[[W0:.*]] = tensor.insert_slice %[[L0]] into %[[STORE]][0, 0, 0, 0]
// CHECK-NEXT: %[[S1:.*]] = tensor.extract_slice %[[W0]][1, 0, 0, 0] [1, %[[T]], %[[B]], 4] [1, 1, 1, 1] : tensor<2x?x?x4xf32> to tensor<?x?x4xf32>
// CHECK: %[[L1:.*]] = scf.for {{.*}} iter_args(%{{.*}} = %[[S1]])
// CHECK: tensor.insert_slice %[[L1]] into %[[W0]][1, 0, 0, 0]
// CHECK: tensor.dim %[[L1]]
func.func @into_store(%x: tensor<?x?x4xf32>, %T: index, %B: index)
    -> (tensor<2x?x?x4xf32>, index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %store = bufferization.alloc_tensor(%T, %B) : tensor<2x?x?x4xf32>
  %a0 = bufferization.alloc_tensor(%T, %B) : tensor<?x?x4xf32>
  %l0 = scf.for %t = %c0 to %T step %c1 iter_args(%s = %a0) -> tensor<?x?x4xf32> {
    %row = tensor.extract_slice %x[%t, 0, 0] [1, %B, 4] [1, 1, 1] : tensor<?x?x4xf32> to tensor<?x4xf32>
    %ins = tensor.insert_slice %row into %s[%t, 0, 0] [1, %B, 4] [1, 1, 1] : tensor<?x4xf32> into tensor<?x?x4xf32>
    scf.yield %ins : tensor<?x?x4xf32>
  }
  %w0 = tensor.insert_slice %l0 into %store[0, 0, 0, 0] [1, %T, %B, 4] [1, 1, 1, 1] : tensor<?x?x4xf32> into tensor<2x?x?x4xf32>
  %a1 = bufferization.alloc_tensor(%T, %B) : tensor<?x?x4xf32>
  %l1 = scf.for %t = %c0 to %T step %c1 iter_args(%s = %a1) -> tensor<?x?x4xf32> {
    %row = tensor.extract_slice %l0[%t, 0, 0] [1, %B, 4] [1, 1, 1] : tensor<?x?x4xf32> to tensor<?x4xf32>
    %ins = tensor.insert_slice %row into %s[%t, 0, 0] [1, %B, 4] [1, 1, 1] : tensor<?x4xf32> into tensor<?x?x4xf32>
    scf.yield %ins : tensor<?x?x4xf32>
  }
  %w1 = tensor.insert_slice %l1 into %w0[1, 0, 0, 0] [1, %T, %B, 4] [1, 1, 1, 1] : tensor<?x?x4xf32> into tensor<2x?x?x4xf32>
  %n = tensor.dim %l1, %c0 : tensor<?x?x4xf32>
  return %w1, %n : tensor<2x?x?x4xf32>, index
}

// -----

// Left alone: an allocation that something besides the loop reads, a store
// made after the allocation, and an allocation with contents to copy.
// CHECK-LABEL: func.func @left_alone
// CHECK-COUNT-2: bufferization.alloc_tensor(%{{.*}}, %{{.*}}) : tensor<?x?x4xf32>
// CHECK: bufferization.alloc_tensor() copy
// CHECK-NOT: tensor.extract_slice %{{.*}}[{{[01]}}, 0, 0, 0]
func.func @left_alone(%x: tensor<?x?x4xf32>, %T: index, %B: index)
    -> (tensor<2x?x?x4xf32>, tensor<2x?x?x4xf32>, tensor<2x?x?x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %store = bufferization.alloc_tensor(%T, %B) : tensor<2x?x?x4xf32>
  %a0 = bufferization.alloc_tensor(%T, %B) : tensor<?x?x4xf32>
  %l0 = scf.for %t = %c0 to %T step %c1 iter_args(%s = %a0) -> tensor<?x?x4xf32> {
    %row = tensor.extract_slice %x[%t, 0, 0] [1, %B, 4] [1, 1, 1] : tensor<?x?x4xf32> to tensor<?x4xf32>
    %ins = tensor.insert_slice %row into %s[%t, 0, 0] [1, %B, 4] [1, 1, 1] : tensor<?x4xf32> into tensor<?x?x4xf32>
    scf.yield %ins : tensor<?x?x4xf32>
  }
  %w0 = tensor.insert_slice %l0 into %store[0, 0, 0, 0] [1, %T, %B, 4] [1, 1, 1, 1] : tensor<?x?x4xf32> into tensor<2x?x?x4xf32>
  %read = tensor.insert_slice %a0 into %store[1, 0, 0, 0] [1, %T, %B, 4] [1, 1, 1, 1] : tensor<?x?x4xf32> into tensor<2x?x?x4xf32>
  %a1 = bufferization.alloc_tensor(%T, %B) : tensor<?x?x4xf32>
  %l1 = scf.for %t = %c0 to %T step %c1 iter_args(%s = %a1) -> tensor<?x?x4xf32> {
    scf.yield %s : tensor<?x?x4xf32>
  }
  %late = bufferization.alloc_tensor(%T, %B) : tensor<2x?x?x4xf32>
  %w1 = tensor.insert_slice %l1 into %late[0, 0, 0, 0] [1, %T, %B, 4] [1, 1, 1, 1] : tensor<?x?x4xf32> into tensor<2x?x?x4xf32>
  %a2 = bufferization.alloc_tensor() copy(%x) : tensor<?x?x4xf32>
  %l2 = scf.for %t = %c0 to %T step %c1 iter_args(%s = %a2) -> tensor<?x?x4xf32> {
    scf.yield %s : tensor<?x?x4xf32>
  }
  %w2 = tensor.insert_slice %l2 into %w0[1, 0, 0, 0] [1, %T, %B, 4] [1, 1, 1, 1] : tensor<?x?x4xf32> into tensor<2x?x?x4xf32>
  return %w2, %read, %w1 : tensor<2x?x?x4xf32>, tensor<2x?x?x4xf32>, tensor<2x?x?x4xf32>
}

// -----

// A part of a layer's batch (lstm-split-batch) inserted into the whole by
// the forall's parallel_insert_slice: the part's loop starts from its rows
// of the shared output.
// CHECK-LABEL: func.func @into_forall_output
// CHECK: scf.forall (%[[K:.*]]) in (%{{.*}}) shared_outs(%[[W:.*]] = %{{.*}})
// CHECK-NOT: bufferization.alloc_tensor
// CHECK: %[[ROWS:.*]] = tensor.extract_slice %[[W]][0, %[[K]], 0] [%{{.*}}, 1, 4] [1, 1, 1] : tensor<?x?x4xf32> to tensor<?x1x4xf32>
// CHECK: %[[L:.*]] = scf.for {{.*}} iter_args(%{{.*}} = %[[ROWS]])
// CHECK: tensor.parallel_insert_slice %[[L]] into %[[W]][0, %[[K]], 0]
func.func @into_forall_output(%x: tensor<?x?x4xf32>, %T: index, %B: index)
    -> tensor<?x?x4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %whole = bufferization.alloc_tensor(%T, %B) : tensor<?x?x4xf32>
  %r = scf.forall (%k) in (%B) shared_outs(%w = %whole) -> tensor<?x?x4xf32> {
    %a = bufferization.alloc_tensor(%T) : tensor<?x1x4xf32>
    %l = scf.for %t = %c0 to %T step %c1 iter_args(%s = %a) -> tensor<?x1x4xf32> {
      %row = tensor.extract_slice %x[%t, %k, 0] [1, 1, 4] [1, 1, 1] : tensor<?x?x4xf32> to tensor<1x4xf32>
      %ins = tensor.insert_slice %row into %s[%t, 0, 0] [1, 1, 4] [1, 1, 1] : tensor<1x4xf32> into tensor<?x1x4xf32>
      scf.yield %ins : tensor<?x1x4xf32>
    }
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %l into %w[0, %k, 0] [%T, 1, 4] [1, 1, 1] : tensor<?x1x4xf32> into tensor<?x?x4xf32>
    }
  }
  return %r : tensor<?x?x4xf32>
}
