// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// RUN: lstm-opt %s --pass-pipeline='builtin.module(func.func(lstm-write-part-stacks-in-place))' -split-input-file | FileCheck %s
// RUN: lstm-opt %s --pass-pipeline='builtin.module(func.func(lstm-write-part-stacks-in-place,lstm-collapse-before-slice))' -split-input-file | FileCheck %s --check-prefix=VIEW

// A split layer in both forms of an scf.if (lstm-hoist-by-threads), its
// output read by the next layer's hoisted projection. Each part's stack
// starts from its slice of an output one row longer, whose rows 1.. the
// forall's result is read as; the scf.if yields the longer tensors, and
// what read its result reads their rows 1...
// CHECK-LABEL: func.func @join
// CHECK-SAME: (%[[H0:[a-z0-9_]+]]: tensor<?x4xf32>, %[[T:[a-z0-9_]+]]: index, %[[B:[a-z0-9_]+]]: index
// CHECK: %[[R:.*]] = scf.if %{{.*}} -> (tensor<?x?x4xf32>) {
// CHECK: %[[T1:.*]] = arith.addi %[[T]], %{{.*}} : index
// CHECK-NEXT: %[[WHOLE:.*]] = bufferization.alloc_tensor(%[[T1]], %[[B]])
// CHECK-NEXT: %[[Y:.*]] = scf.forall (%{{.*}}) in (%{{.*}}) shared_outs(%[[O:.*]] = %[[WHOLE]])
// CHECK: %[[LO:.*]] = arith.muli
// CHECK: %[[S1:.*]] = arith.addi %[[T]]
// CHECK-NOT: bufferization.alloc_tensor
// CHECK: %[[PART:.*]] = tensor.extract_slice %[[O]][0, %[[LO]], 0] [%[[S1]], %{{.*}}, 4] [1, 1, 1]
// CHECK: tensor.insert_slice %{{.*}} into %[[PART]][0, 0, 0]
// CHECK: %[[STACK:.*]] = scf.for
// CHECK: scf.forall.in_parallel
// CHECK-NEXT: tensor.parallel_insert_slice %[[STACK]] into %[[O]][0, %[[LO]], 0] [%[[S1]], %{{.*}}, 4] [1, 1, 1]
// CHECK: scf.yield %[[Y]] : tensor<?x?x4xf32>
// CHECK: } else {
// CHECK: scf.yield %{{.*}} : tensor<?x?x4xf32>
// CHECK: %[[N:.*]] = tensor.dim %[[R]], %c0
// CHECK: %[[NT:.*]] = arith.subi %[[N]], %c1
// CHECK: %[[NB:.*]] = tensor.dim %[[R]], %c1
// CHECK: %[[ROWS:.*]] = tensor.extract_slice %[[R]][1, 0, 0] [%[[NT]], %[[NB]], 4] [1, 1, 1]
// CHECK-NEXT: tensor.collapse_shape %[[ROWS]]
// VIEW-LABEL: func.func @join
// VIEW: %[[R:.*]] = scf.if
// VIEW: %[[FLAT:.*]] = tensor.collapse_shape %[[R]] {{\[}}[0, 1], [2]]
// VIEW: tensor.extract_slice %[[FLAT]]
func.func @join(%h0: tensor<?x4xf32>, %T: index, %B: index, %n: index, %cond: i1) -> tensor<?x4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.if %cond -> tensor<?x?x4xf32> {
    %whole_a = bufferization.alloc_tensor(%T, %B) : tensor<?x?x4xf32>
    %y = scf.forall (%k) in (%n) shared_outs(%o = %whole_a) -> tensor<?x?x4xf32> {
      %m = arith.divui %B, %n : index
      %lo = arith.muli %k, %m : index
      %T1 = arith.addi %T, %c1 : index
      %stack0 = bufferization.alloc_tensor(%T1, %m) : tensor<?x?x4xf32>
      %h = tensor.extract_slice %h0[%lo, 0] [%m, 4] [1, 1] : tensor<?x4xf32> to tensor<?x4xf32>
      %init = tensor.insert_slice %h into %stack0[0, 0, 0] [1, %m, 4] [1, 1, 1] : tensor<?x4xf32> into tensor<?x?x4xf32>
      %stack = scf.for %t = %c0 to %T step %c1 iter_args(%s = %init) -> tensor<?x?x4xf32> {
        %prev = tensor.extract_slice %s[%t, 0, 0] [1, %m, 4] [1, 1, 1] : tensor<?x?x4xf32> to tensor<?x4xf32>
        %next = arith.addf %prev, %prev : tensor<?x4xf32>
        %t1 = arith.addi %t, %c1 : index
        %ins = tensor.insert_slice %next into %s[%t1, 0, 0] [1, %m, 4] [1, 1, 1] : tensor<?x4xf32> into tensor<?x?x4xf32>
        scf.yield %ins : tensor<?x?x4xf32>
      }
      %mm = tensor.dim %stack, %c1 : tensor<?x?x4xf32>
      %rows = tensor.extract_slice %stack[1, 0, 0] [%T, %mm, 4] [1, 1, 1] : tensor<?x?x4xf32> to tensor<?x?x4xf32>
      scf.forall.in_parallel {
        tensor.parallel_insert_slice %rows into %o[0, %lo, 0] [%T, %m, 4] [1, 1, 1] : tensor<?x?x4xf32> into tensor<?x?x4xf32>
      }
    }
    scf.yield %y : tensor<?x?x4xf32>
  } else {
    %whole_b = bufferization.alloc_tensor(%T, %B) : tensor<?x?x4xf32>
    %y = scf.forall (%k) in (%n) shared_outs(%o = %whole_b) -> tensor<?x?x4xf32> {
      %m = arith.divui %B, %n : index
      %lo = arith.muli %k, %m : index
      %T1 = arith.addi %T, %c1 : index
      %stack0 = bufferization.alloc_tensor(%T1, %m) : tensor<?x?x4xf32>
      %h = tensor.extract_slice %h0[%lo, 0] [%m, 4] [1, 1] : tensor<?x4xf32> to tensor<?x4xf32>
      %init = tensor.insert_slice %h into %stack0[0, 0, 0] [1, %m, 4] [1, 1, 1] : tensor<?x4xf32> into tensor<?x?x4xf32>
      %stack = scf.for %t = %c0 to %T step %c1 iter_args(%s = %init) -> tensor<?x?x4xf32> {
        %prev = tensor.extract_slice %s[%t, 0, 0] [1, %m, 4] [1, 1, 1] : tensor<?x?x4xf32> to tensor<?x4xf32>
        %next = arith.addf %prev, %prev : tensor<?x4xf32>
        %t1 = arith.addi %t, %c1 : index
        %ins = tensor.insert_slice %next into %s[%t1, 0, 0] [1, %m, 4] [1, 1, 1] : tensor<?x4xf32> into tensor<?x?x4xf32>
        scf.yield %ins : tensor<?x?x4xf32>
      }
      %mm = tensor.dim %stack, %c1 : tensor<?x?x4xf32>
      %rows = tensor.extract_slice %stack[1, 0, 0] [%T, %mm, 4] [1, 1, 1] : tensor<?x?x4xf32> to tensor<?x?x4xf32>
      scf.forall.in_parallel {
        tensor.parallel_insert_slice %rows into %o[0, %lo, 0] [%T, %m, 4] [1, 1, 1] : tensor<?x?x4xf32> into tensor<?x?x4xf32>
      }
    }
    scf.yield %y : tensor<?x?x4xf32>
  }
  %flat = tensor.collapse_shape %r [[0, 1], [2]] : tensor<?x?x4xf32> into tensor<?x4xf32>
  return %flat : tensor<?x4xf32>
}

// -----

// Left alone: an output the function returns (its rows would be copied
// there on one thread instead of by the parts), and an scf.if one of whose
// branches yields another tensor (the result's layout would be unknown).
// CHECK-LABEL: func.func @left_alone
// CHECK-SAME: %[[T:[a-z0-9_]+]]: index, %[[B:[a-z0-9_]+]]: index
// CHECK: bufferization.alloc_tensor(%[[T]], %[[B]]) : tensor<?x?x4xf32>
// CHECK: %[[ROWS:.*]] = tensor.extract_slice %{{.*}}[1, 0, 0]
// CHECK: tensor.parallel_insert_slice %[[ROWS]] into
// CHECK: bufferization.alloc_tensor(%[[T]], %[[B]]) : tensor<?x?x4xf32>
// CHECK: %[[ROWS2:.*]] = tensor.extract_slice %{{.*}}[1, 0, 0]
// CHECK: tensor.parallel_insert_slice %[[ROWS2]] into
// CHECK: bufferization.alloc_tensor(%[[T]], %[[B]]) : tensor<?x?x4xf32>
// CHECK-NOT: tensor.extract_slice
// CHECK: return
func.func @left_alone(%h0: tensor<?x4xf32>, %T: index, %B: index, %n: index, %cond: i1) -> (tensor<?x?x4xf32>, tensor<?x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
    %whole_a = bufferization.alloc_tensor(%T, %B) : tensor<?x?x4xf32>
    %y = scf.forall (%k) in (%n) shared_outs(%o = %whole_a) -> tensor<?x?x4xf32> {
      %m = arith.divui %B, %n : index
      %lo = arith.muli %k, %m : index
      %T1 = arith.addi %T, %c1 : index
      %stack0 = bufferization.alloc_tensor(%T1, %m) : tensor<?x?x4xf32>
      %h = tensor.extract_slice %h0[%lo, 0] [%m, 4] [1, 1] : tensor<?x4xf32> to tensor<?x4xf32>
      %init = tensor.insert_slice %h into %stack0[0, 0, 0] [1, %m, 4] [1, 1, 1] : tensor<?x4xf32> into tensor<?x?x4xf32>
      %stack = scf.for %t = %c0 to %T step %c1 iter_args(%s = %init) -> tensor<?x?x4xf32> {
        %prev = tensor.extract_slice %s[%t, 0, 0] [1, %m, 4] [1, 1, 1] : tensor<?x?x4xf32> to tensor<?x4xf32>
        %next = arith.addf %prev, %prev : tensor<?x4xf32>
        %t1 = arith.addi %t, %c1 : index
        %ins = tensor.insert_slice %next into %s[%t1, 0, 0] [1, %m, 4] [1, 1, 1] : tensor<?x4xf32> into tensor<?x?x4xf32>
        scf.yield %ins : tensor<?x?x4xf32>
      }
      %mm = tensor.dim %stack, %c1 : tensor<?x?x4xf32>
      %rows = tensor.extract_slice %stack[1, 0, 0] [%T, %mm, 4] [1, 1, 1] : tensor<?x?x4xf32> to tensor<?x?x4xf32>
      scf.forall.in_parallel {
        tensor.parallel_insert_slice %rows into %o[0, %lo, 0] [%T, %m, 4] [1, 1, 1] : tensor<?x?x4xf32> into tensor<?x?x4xf32>
      }
    }
  %r = scf.if %cond -> tensor<?x?x4xf32> {
    %whole_b = bufferization.alloc_tensor(%T, %B) : tensor<?x?x4xf32>
    %y2 = scf.forall (%k) in (%n) shared_outs(%o = %whole_b) -> tensor<?x?x4xf32> {
      %m = arith.divui %B, %n : index
      %lo = arith.muli %k, %m : index
      %T1 = arith.addi %T, %c1 : index
      %stack0 = bufferization.alloc_tensor(%T1, %m) : tensor<?x?x4xf32>
      %h = tensor.extract_slice %h0[%lo, 0] [%m, 4] [1, 1] : tensor<?x4xf32> to tensor<?x4xf32>
      %init = tensor.insert_slice %h into %stack0[0, 0, 0] [1, %m, 4] [1, 1, 1] : tensor<?x4xf32> into tensor<?x?x4xf32>
      %stack = scf.for %t = %c0 to %T step %c1 iter_args(%s = %init) -> tensor<?x?x4xf32> {
        %prev = tensor.extract_slice %s[%t, 0, 0] [1, %m, 4] [1, 1, 1] : tensor<?x?x4xf32> to tensor<?x4xf32>
        %next = arith.addf %prev, %prev : tensor<?x4xf32>
        %t1 = arith.addi %t, %c1 : index
        %ins = tensor.insert_slice %next into %s[%t1, 0, 0] [1, %m, 4] [1, 1, 1] : tensor<?x4xf32> into tensor<?x?x4xf32>
        scf.yield %ins : tensor<?x?x4xf32>
      }
      %mm = tensor.dim %stack, %c1 : tensor<?x?x4xf32>
      %rows = tensor.extract_slice %stack[1, 0, 0] [%T, %mm, 4] [1, 1, 1] : tensor<?x?x4xf32> to tensor<?x?x4xf32>
      scf.forall.in_parallel {
        tensor.parallel_insert_slice %rows into %o[0, %lo, 0] [%T, %m, 4] [1, 1, 1] : tensor<?x?x4xf32> into tensor<?x?x4xf32>
      }
    }
    scf.yield %y2 : tensor<?x?x4xf32>
  } else {
    %other = bufferization.alloc_tensor(%T, %B) : tensor<?x?x4xf32>
    scf.yield %other : tensor<?x?x4xf32>
  }
  %flat = tensor.collapse_shape %r [[0, 1], [2]] : tensor<?x?x4xf32> into tensor<?x4xf32>
  return %y, %flat : tensor<?x?x4xf32>, tensor<?x4xf32>
}

// -----

// Left alone: rows that are not all the stack's but the first (rows 0..T-1:
// the part's row 0 would land in the output's rows), and rows put anywhere
// but from the output's row 0 (the part's initial state would land in
// another part's rows).
// CHECK-LABEL: func.func @not_the_tail
// CHECK-SAME: %[[T:[a-z0-9_]+]]: index, %[[B:[a-z0-9_]+]]: index
// CHECK: bufferization.alloc_tensor(%[[T]], %[[B]]) : tensor<?x?x4xf32>
// CHECK: %[[ROWS:.*]] = tensor.extract_slice %{{.*}}[0, 0, 0]
// CHECK: tensor.parallel_insert_slice %[[ROWS]] into
// CHECK: bufferization.alloc_tensor(%[[T]], %[[B]]) : tensor<?x?x4xf32>
// CHECK: %[[ROWS2:.*]] = tensor.extract_slice %{{.*}}[1, 0, 0]
// CHECK: tensor.parallel_insert_slice %[[ROWS2]] into %{{.*}}[%c1,
func.func @not_the_tail(%h0: tensor<?x4xf32>, %T: index, %B: index, %n: index, %cond: i1) -> tensor<?x4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
    %whole_a = bufferization.alloc_tensor(%T, %B) : tensor<?x?x4xf32>
    %y = scf.forall (%k) in (%n) shared_outs(%o = %whole_a) -> tensor<?x?x4xf32> {
      %m = arith.divui %B, %n : index
      %lo = arith.muli %k, %m : index
      %T1 = arith.addi %T, %c1 : index
      %stack0 = bufferization.alloc_tensor(%T1, %m) : tensor<?x?x4xf32>
      %h = tensor.extract_slice %h0[%lo, 0] [%m, 4] [1, 1] : tensor<?x4xf32> to tensor<?x4xf32>
      %init = tensor.insert_slice %h into %stack0[0, 0, 0] [1, %m, 4] [1, 1, 1] : tensor<?x4xf32> into tensor<?x?x4xf32>
      %stack = scf.for %t = %c0 to %T step %c1 iter_args(%s = %init) -> tensor<?x?x4xf32> {
        %prev = tensor.extract_slice %s[%t, 0, 0] [1, %m, 4] [1, 1, 1] : tensor<?x?x4xf32> to tensor<?x4xf32>
        %next = arith.addf %prev, %prev : tensor<?x4xf32>
        %t1 = arith.addi %t, %c1 : index
        %ins = tensor.insert_slice %next into %s[%t1, 0, 0] [1, %m, 4] [1, 1, 1] : tensor<?x4xf32> into tensor<?x?x4xf32>
        scf.yield %ins : tensor<?x?x4xf32>
      }
      %mm = tensor.dim %stack, %c1 : tensor<?x?x4xf32>
      %rows = tensor.extract_slice %stack[0, 0, 0] [%T, %mm, 4] [1, 1, 1] : tensor<?x?x4xf32> to tensor<?x?x4xf32>
      scf.forall.in_parallel {
        tensor.parallel_insert_slice %rows into %o[0, %lo, 0] [%T, %m, 4] [1, 1, 1] : tensor<?x?x4xf32> into tensor<?x?x4xf32>
      }
    }
    %whole_b = bufferization.alloc_tensor(%T, %B) : tensor<?x?x4xf32>
    %y2 = scf.forall (%k) in (%n) shared_outs(%o = %whole_b) -> tensor<?x?x4xf32> {
      %m = arith.divui %B, %n : index
      %lo = arith.muli %k, %m : index
      %T1 = arith.addi %T, %c1 : index
      %stack0 = bufferization.alloc_tensor(%T1, %m) : tensor<?x?x4xf32>
      %h = tensor.extract_slice %h0[%lo, 0] [%m, 4] [1, 1] : tensor<?x4xf32> to tensor<?x4xf32>
      %init = tensor.insert_slice %h into %stack0[0, 0, 0] [1, %m, 4] [1, 1, 1] : tensor<?x4xf32> into tensor<?x?x4xf32>
      %stack = scf.for %t = %c0 to %T step %c1 iter_args(%s = %init) -> tensor<?x?x4xf32> {
        %prev = tensor.extract_slice %s[%t, 0, 0] [1, %m, 4] [1, 1, 1] : tensor<?x?x4xf32> to tensor<?x4xf32>
        %next = arith.addf %prev, %prev : tensor<?x4xf32>
        %t1 = arith.addi %t, %c1 : index
        %ins = tensor.insert_slice %next into %s[%t1, 0, 0] [1, %m, 4] [1, 1, 1] : tensor<?x4xf32> into tensor<?x?x4xf32>
        scf.yield %ins : tensor<?x?x4xf32>
      }
      %mm = tensor.dim %stack, %c1 : tensor<?x?x4xf32>
      %rows = tensor.extract_slice %stack[1, 0, 0] [%T, %mm, 4] [1, 1, 1] : tensor<?x?x4xf32> to tensor<?x?x4xf32>
      scf.forall.in_parallel {
        tensor.parallel_insert_slice %rows into %o[%c1, %lo, 0] [%T, %m, 4] [1, 1, 1] : tensor<?x?x4xf32> into tensor<?x?x4xf32>
      }
    }
  %flat = tensor.collapse_shape %y [[0, 1], [2]] : tensor<?x?x4xf32> into tensor<?x4xf32>
  %flat2 = tensor.collapse_shape %y2 [[0, 1], [2]] : tensor<?x?x4xf32> into tensor<?x4xf32>
  %sum = arith.addf %flat, %flat2 : tensor<?x4xf32>
  return %sum : tensor<?x4xf32>
}

// -----

// Left alone: a part's stack that starts from a copy of a tensor (its rows
// are not undefined, so they cannot be the output's). The value-bounds
// analysis reads the copy's extents for the allocation's.
// CHECK-LABEL: func.func @from_a_copy
// CHECK: %[[SEED:.*]] = tensor.empty
// CHECK: bufferization.alloc_tensor() copy(%[[SEED]])
// CHECK: %[[ROWS:.*]] = tensor.extract_slice %{{.*}}[1, 0, 0]
// CHECK: tensor.parallel_insert_slice %[[ROWS]] into
func.func @from_a_copy(%T: index, %B: index, %n: index) -> tensor<?x4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %whole = bufferization.alloc_tensor(%T, %B) : tensor<?x?x4xf32>
  %y = scf.forall (%k) in (%n) shared_outs(%o = %whole) -> tensor<?x?x4xf32> {
    %m = arith.divui %B, %n : index
    %lo = arith.muli %k, %m : index
    %T1 = arith.addi %T, %c1 : index
    %seed = tensor.empty(%T1, %m) : tensor<?x?x4xf32>
    %stack0 = bufferization.alloc_tensor() copy(%seed) : tensor<?x?x4xf32>
    %stack = scf.for %t = %c0 to %T step %c1 iter_args(%s = %stack0) -> tensor<?x?x4xf32> {
      %prev = tensor.extract_slice %s[%t, 0, 0] [1, %m, 4] [1, 1, 1] : tensor<?x?x4xf32> to tensor<?x4xf32>
      %t1 = arith.addi %t, %c1 : index
      %ins = tensor.insert_slice %prev into %s[%t1, 0, 0] [1, %m, 4] [1, 1, 1] : tensor<?x4xf32> into tensor<?x?x4xf32>
      scf.yield %ins : tensor<?x?x4xf32>
    }
    %mm = tensor.dim %stack, %c1 : tensor<?x?x4xf32>
    %rows = tensor.extract_slice %stack[1, 0, 0] [%T, %mm, 4] [1, 1, 1] : tensor<?x?x4xf32> to tensor<?x?x4xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %rows into %o[0, %lo, 0] [%T, %m, 4] [1, 1, 1] : tensor<?x?x4xf32> into tensor<?x?x4xf32>
    }
  }
  %flat = tensor.collapse_shape %y [[0, 1], [2]] : tensor<?x?x4xf32> into tensor<?x4xf32>
  return %flat : tensor<?x4xf32>
}
