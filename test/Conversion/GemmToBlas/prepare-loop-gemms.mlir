// RUN: lstm-opt %s --lstm-prepare-loop-gemms -split-input-file | FileCheck %s

// The step product h·Rᵀ of a time loop, R an argument: prepared before the
// loop (R packed), computed with the plan in the loop, released after.
// CHECK-LABEL: func.func @recurrent_weight_argument
// CHECK-SAME: (%{{.*}}: memref<?x128xf32>, %[[R:.*]]: memref<512x128xf32>, %[[M:.*]]: i64,
// CHECK: %[[RPTR:.*]] = llvm.inttoptr
// CHECK: %[[PLAN:.*]] = call @lstmRuntimeCpuSgemmPrepare(%c0_i32, %c1_i32, %[[M]], %c512_i64, %c128_i64, %{{.*}}, %c128_i64, %[[RPTR]], %c128_i64, %{{.*}}, %c512_i64) : (i32, i32, i64, i64, i64, f32, i64, !llvm.ptr, i64, f32, i64) -> !llvm.ptr
// CHECK: scf.for
// CHECK-NOT: @lstmRuntimeCpuSgemm(
// CHECK: call @lstmRuntimeCpuSgemmPrepared(%[[PLAN]], %[[A:.*]], %[[C:.*]]) : (!llvm.ptr, !llvm.ptr, !llvm.ptr) -> ()
// CHECK: }
// CHECK: call @lstmRuntimeCpuSgemmRelease(%[[PLAN]])
// CHECK: func.func private @lstmRuntimeCpuSgemmPrepare(
// CHECK: func.func private @lstmRuntimeCpuSgemmPrepared(
// CHECK: func.func private @lstmRuntimeCpuSgemmRelease(
func.func private @lstmRuntimeCpuSgemm(i32, i32, i64, i64, i64, f32, !llvm.ptr, i64, i64, !llvm.ptr, i64, i64, f32, !llvm.ptr, i64, i64, i64)
func.func @recurrent_weight_argument(%h: memref<?x128xf32>, %r: memref<512x128xf32>, %m: i64, %t: index, %out: memref<?x512xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c0_i32 = arith.constant 0 : i32
  %c1_i32 = arith.constant 1 : i32
  %c0_i64 = arith.constant 0 : i64
  %c1_i64 = arith.constant 1 : i64
  %c128 = arith.constant 128 : i64
  %c512 = arith.constant 512 : i64
  %one = arith.constant 1.0 : f32
  %zero = arith.constant 0.0 : f32
  %rint = memref.extract_aligned_pointer_as_index %r : memref<512x128xf32> -> index
  %ri64 = arith.index_cast %rint : index to i64
  %rptr = llvm.inttoptr %ri64 : i64 to !llvm.ptr
  scf.for %i = %c0 to %t step %c1 {
    %hint = memref.extract_aligned_pointer_as_index %h : memref<?x128xf32> -> index
    %hi64 = arith.index_cast %hint : index to i64
    %hptr = llvm.inttoptr %hi64 : i64 to !llvm.ptr
    %oint = memref.extract_aligned_pointer_as_index %out : memref<?x512xf32> -> index
    %oi64 = arith.index_cast %oint : index to i64
    %optr = llvm.inttoptr %oi64 : i64 to !llvm.ptr
    func.call @lstmRuntimeCpuSgemm(%c0_i32, %c1_i32, %m, %c512, %c128, %one, %hptr, %c128, %c0_i64, %rptr, %c128, %c0_i64, %zero, %optr, %c512, %c0_i64, %c1_i64) : (i32, i32, i64, i64, i64, f32, !llvm.ptr, i64, i64, !llvm.ptr, i64, i64, f32, !llvm.ptr, i64, i64, i64) -> ()
  }
  return
}

// -----

// B an allocation filled before the loop (a combined weight) and only read
// in it: prepared. The same allocation written in the loop: left alone.
// CHECK-LABEL: func.func @combined_weight
// CHECK: call @lstmRuntimeCpuSgemmPrepare
// CHECK: scf.for
// CHECK: call @lstmRuntimeCpuSgemmPrepared
// CHECK-LABEL: func.func @weight_written_in_loop
// CHECK-NOT: Prepare
// CHECK: scf.for
// CHECK: call @lstmRuntimeCpuSgemm(
// CHECK-NOT: Prepare
// CHECK: return
func.func private @lstmRuntimeCpuSgemm(i32, i32, i64, i64, i64, f32, !llvm.ptr, i64, i64, !llvm.ptr, i64, i64, f32, !llvm.ptr, i64, i64, i64)
func.func @combined_weight(%h: !llvm.ptr, %src: memref<512x128xf32>, %t: index, %out: !llvm.ptr) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c0_i32 = arith.constant 0 : i32
  %c0_i64 = arith.constant 0 : i64
  %c1_i64 = arith.constant 1 : i64
  %c128 = arith.constant 128 : i64
  %c512 = arith.constant 512 : i64
  %one = arith.constant 1.0 : f32
  %w = memref.alloc() : memref<512x128xf32>
  memref.copy %src, %w : memref<512x128xf32> to memref<512x128xf32>
  %wint = memref.extract_aligned_pointer_as_index %w : memref<512x128xf32> -> index
  %wi64 = arith.index_cast %wint : index to i64
  %wptr = llvm.inttoptr %wi64 : i64 to !llvm.ptr
  scf.for %i = %c0 to %t step %c1 {
    func.call @lstmRuntimeCpuSgemm(%c0_i32, %c0_i32, %c1_i64, %c128, %c512, %one, %h, %c512, %c0_i64, %wptr, %c128, %c0_i64, %one, %out, %c128, %c0_i64, %c1_i64) : (i32, i32, i64, i64, i64, f32, !llvm.ptr, i64, i64, !llvm.ptr, i64, i64, f32, !llvm.ptr, i64, i64, i64) -> ()
  }
  memref.dealloc %w : memref<512x128xf32>
  return
}
func.func @weight_written_in_loop(%h: !llvm.ptr, %src: memref<512x128xf32>, %t: index, %out: !llvm.ptr) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c0_i32 = arith.constant 0 : i32
  %c0_i64 = arith.constant 0 : i64
  %c1_i64 = arith.constant 1 : i64
  %c128 = arith.constant 128 : i64
  %c512 = arith.constant 512 : i64
  %one = arith.constant 1.0 : f32
  %w = memref.alloc() : memref<512x128xf32>
  %wint = memref.extract_aligned_pointer_as_index %w : memref<512x128xf32> -> index
  %wi64 = arith.index_cast %wint : index to i64
  %wptr = llvm.inttoptr %wi64 : i64 to !llvm.ptr
  scf.for %i = %c0 to %t step %c1 {
    memref.copy %src, %w : memref<512x128xf32> to memref<512x128xf32>
    func.call @lstmRuntimeCpuSgemm(%c0_i32, %c0_i32, %c1_i64, %c128, %c512, %one, %h, %c512, %c0_i64, %wptr, %c128, %c0_i64, %one, %out, %c128, %c0_i64, %c1_i64) : (i32, i32, i64, i64, i64, f32, !llvm.ptr, i64, i64, !llvm.ptr, i64, i64, f32, !llvm.ptr, i64, i64, i64) -> ()
  }
  memref.dealloc %w : memref<512x128xf32>
  return
}

// -----

// B's buffer also carried through the loop as an iteration argument and
// written through it: the write is followed back to B's buffer, left alone.
// CHECK-LABEL: func.func @weight_written_through_iter_arg
// CHECK-NOT: Prepare
// CHECK: return
func.func private @lstmRuntimeCpuSgemm(i32, i32, i64, i64, i64, f32, !llvm.ptr, i64, i64, !llvm.ptr, i64, i64, f32, !llvm.ptr, i64, i64, i64)
func.func @weight_written_through_iter_arg(%h: !llvm.ptr, %src: memref<512x128xf32>, %t: index, %out: !llvm.ptr) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c0_i32 = arith.constant 0 : i32
  %c0_i64 = arith.constant 0 : i64
  %c1_i64 = arith.constant 1 : i64
  %c128 = arith.constant 128 : i64
  %c512 = arith.constant 512 : i64
  %one = arith.constant 1.0 : f32
  %w = memref.alloc() : memref<512x128xf32>
  %wint = memref.extract_aligned_pointer_as_index %w : memref<512x128xf32> -> index
  %wi64 = arith.index_cast %wint : index to i64
  %wptr = llvm.inttoptr %wi64 : i64 to !llvm.ptr
  %last = scf.for %i = %c0 to %t step %c1 iter_args(%carried = %w) -> (memref<512x128xf32>) {
    func.call @lstmRuntimeCpuSgemm(%c0_i32, %c0_i32, %c1_i64, %c128, %c512, %one, %h, %c512, %c0_i64, %wptr, %c128, %c0_i64, %one, %out, %c128, %c0_i64, %c1_i64) : (i32, i32, i64, i64, i64, f32, !llvm.ptr, i64, i64, !llvm.ptr, i64, i64, f32, !llvm.ptr, i64, i64, i64) -> ()
    memref.copy %src, %carried : memref<512x128xf32> to memref<512x128xf32>
    scf.yield %carried : memref<512x128xf32>
  }
  memref.dealloc %w : memref<512x128xf32>
  return
}

// -----

// Left alone: B changes from step to step, a batch of products, a size set
// in the loop, a GEMM writing into B's buffer, an unknown call in the loop.
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: Prepare
func.func private @lstmRuntimeCpuSgemm(i32, i32, i64, i64, i64, f32, !llvm.ptr, i64, i64, !llvm.ptr, i64, i64, f32, !llvm.ptr, i64, i64, i64)
func.func private @opaque()
func.func @left_alone(%h: !llvm.ptr, %r: memref<?x128xf32>, %t: index, %out: !llvm.ptr, %n: i64) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c0_i32 = arith.constant 0 : i32
  %c0_i64 = arith.constant 0 : i64
  %c1_i64 = arith.constant 1 : i64
  %c2_i64 = arith.constant 2 : i64
  %c128 = arith.constant 128 : i64
  %c512 = arith.constant 512 : i64
  %one = arith.constant 1.0 : f32
  %rint = memref.extract_aligned_pointer_as_index %r : memref<?x128xf32> -> index
  %ri64 = arith.index_cast %rint : index to i64
  %rptr = llvm.inttoptr %ri64 : i64 to !llvm.ptr
  scf.for %i = %c0 to %t step %c1 {
    %ii = arith.index_cast %i : index to i64
    %off = arith.muli %ii, %c512 : i64
    %step = llvm.getelementptr %rptr[%off] : (!llvm.ptr, i64) -> !llvm.ptr, f32
    func.call @lstmRuntimeCpuSgemm(%c0_i32, %c0_i32, %c1_i64, %c128, %c512, %one, %h, %c512, %c0_i64, %step, %c128, %c0_i64, %one, %out, %c128, %c0_i64, %c1_i64) : (i32, i32, i64, i64, i64, f32, !llvm.ptr, i64, i64, !llvm.ptr, i64, i64, f32, !llvm.ptr, i64, i64, i64) -> ()
    func.call @lstmRuntimeCpuSgemm(%c0_i32, %c0_i32, %c1_i64, %c128, %c512, %one, %h, %c512, %c0_i64, %rptr, %c128, %c0_i64, %one, %out, %c128, %c0_i64, %c2_i64) : (i32, i32, i64, i64, i64, f32, !llvm.ptr, i64, i64, !llvm.ptr, i64, i64, f32, !llvm.ptr, i64, i64, i64) -> ()
    %m = arith.addi %ii, %c1_i64 : i64
    func.call @lstmRuntimeCpuSgemm(%c0_i32, %c0_i32, %m, %c128, %c512, %one, %h, %c512, %c0_i64, %rptr, %c128, %c0_i64, %one, %out, %c128, %c0_i64, %c1_i64) : (i32, i32, i64, i64, i64, f32, !llvm.ptr, i64, i64, !llvm.ptr, i64, i64, f32, !llvm.ptr, i64, i64, i64) -> ()
  }
  scf.for %i = %c0 to %t step %c1 {
    func.call @lstmRuntimeCpuSgemm(%c0_i32, %c0_i32, %c1_i64, %c128, %c512, %one, %h, %c512, %c0_i64, %rptr, %c128, %c0_i64, %one, %rptr, %c128, %c0_i64, %c1_i64) : (i32, i32, i64, i64, i64, f32, !llvm.ptr, i64, i64, !llvm.ptr, i64, i64, f32, !llvm.ptr, i64, i64, i64) -> ()
  }
  scf.for %i = %c0 to %t step %c1 {
    func.call @opaque() : () -> ()
    func.call @lstmRuntimeCpuSgemm(%c0_i32, %c0_i32, %c1_i64, %c128, %c512, %one, %h, %c512, %c0_i64, %rptr, %c128, %c0_i64, %one, %out, %c128, %c0_i64, %c1_i64) : (i32, i32, i64, i64, i64, f32, !llvm.ptr, i64, i64, !llvm.ptr, i64, i64, f32, !llvm.ptr, i64, i64, i64) -> ()
  }
  return
}

// -----

// A time loop inside a loop over chunks of steps
// (lstm-chunk-hoisted-projections): the product is invariant in both, so it
// is prepared before the outer loop, once. Where M changes with the outer
// loop (a chunk's rows), only the inner loop's plan is possible: prepared
// before the inner loop.
// CHECK-LABEL: func.func @chunks_of_steps
// CHECK: %[[PLAN:.*]] = call @lstmRuntimeCpuSgemmPrepare
// CHECK: scf.for
// CHECK-NOT: Prepare(
// CHECK: scf.for
// CHECK: call @lstmRuntimeCpuSgemmPrepared(%[[PLAN]],
// CHECK: }
// CHECK: }
// CHECK: call @lstmRuntimeCpuSgemmRelease(%[[PLAN]])
// CHECK-LABEL: func.func @rows_of_the_chunk
// CHECK: scf.for %[[C:.*]] =
// CHECK: %[[M:.*]] = arith.index_cast %[[C]]
// CHECK: %[[PLAN:.*]] = func.call @lstmRuntimeCpuSgemmPrepare(%{{.*}}, %{{.*}}, %[[M]],
// CHECK: scf.for
// CHECK: call @lstmRuntimeCpuSgemmPrepared(%[[PLAN]],
// CHECK: }
// CHECK: call @lstmRuntimeCpuSgemmRelease(%[[PLAN]])
// CHECK: }
func.func private @lstmRuntimeCpuSgemm(i32, i32, i64, i64, i64, f32, !llvm.ptr, i64, i64, !llvm.ptr, i64, i64, f32, !llvm.ptr, i64, i64, i64)
func.func @chunks_of_steps(%h: !llvm.ptr, %r: memref<512x128xf32>, %m: i64, %t: index, %k: index, %out: !llvm.ptr) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c0_i32 = arith.constant 0 : i32
  %c1_i32 = arith.constant 1 : i32
  %c0_i64 = arith.constant 0 : i64
  %c1_i64 = arith.constant 1 : i64
  %c128 = arith.constant 128 : i64
  %c512 = arith.constant 512 : i64
  %one = arith.constant 1.0 : f32
  %zero = arith.constant 0.0 : f32
  %rint = memref.extract_aligned_pointer_as_index %r : memref<512x128xf32> -> index
  %ri64 = arith.index_cast %rint : index to i64
  %rptr = llvm.inttoptr %ri64 : i64 to !llvm.ptr
  scf.for %c = %c0 to %t step %k {
    scf.for %i = %c0 to %k step %c1 {
      func.call @lstmRuntimeCpuSgemm(%c0_i32, %c1_i32, %m, %c512, %c128, %one, %h, %c128, %c0_i64, %rptr, %c128, %c0_i64, %zero, %out, %c512, %c0_i64, %c1_i64) : (i32, i32, i64, i64, i64, f32, !llvm.ptr, i64, i64, !llvm.ptr, i64, i64, f32, !llvm.ptr, i64, i64, i64) -> ()
    }
  }
  return
}
func.func @rows_of_the_chunk(%h: !llvm.ptr, %r: memref<512x128xf32>, %t: index, %k: index, %out: !llvm.ptr) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c0_i32 = arith.constant 0 : i32
  %c1_i32 = arith.constant 1 : i32
  %c0_i64 = arith.constant 0 : i64
  %c1_i64 = arith.constant 1 : i64
  %c128 = arith.constant 128 : i64
  %c512 = arith.constant 512 : i64
  %one = arith.constant 1.0 : f32
  %zero = arith.constant 0.0 : f32
  %rint = memref.extract_aligned_pointer_as_index %r : memref<512x128xf32> -> index
  %ri64 = arith.index_cast %rint : index to i64
  %rptr = llvm.inttoptr %ri64 : i64 to !llvm.ptr
  scf.for %c = %c0 to %t step %k {
    %m = arith.index_cast %c : index to i64
    scf.for %i = %c0 to %k step %c1 {
      func.call @lstmRuntimeCpuSgemm(%c0_i32, %c1_i32, %m, %c512, %c128, %one, %h, %c128, %c0_i64, %rptr, %c128, %c0_i64, %zero, %out, %c512, %c0_i64, %c1_i64) : (i32, i32, i64, i64, i64, f32, !llvm.ptr, i64, i64, !llvm.ptr, i64, i64, f32, !llvm.ptr, i64, i64, i64) -> ()
    }
  }
  return
}

// -----

// A loop that writes a buffer chosen by an scf.if (a layer's output in its
// hoisted or its stepwise form, lstm-hoist-by-threads): the buffer is one
// that a branch yields. Neither branch's is the weight: the product is
// prepared. Where a branch yields the weight itself, the loop may write it:
// not prepared.
// CHECK-LABEL: func.func @writes_a_choice
// CHECK: %[[PLAN:.*]] = call @lstmRuntimeCpuSgemmPrepare
// CHECK: scf.for
// CHECK: memref.store
// CHECK: call @lstmRuntimeCpuSgemmPrepared(%[[PLAN]],
// CHECK: call @lstmRuntimeCpuSgemmRelease(%[[PLAN]])
// CHECK-LABEL: func.func @writes_the_weight_maybe
// CHECK-NOT: Prepare
// CHECK: call @lstmRuntimeCpuSgemm(
func.func private @lstmRuntimeCpuSgemm(i32, i32, i64, i64, i64, f32, !llvm.ptr, i64, i64, !llvm.ptr, i64, i64, f32, !llvm.ptr, i64, i64, i64)
func.func @writes_a_choice(%h: !llvm.ptr, %r: memref<512x128xf32>, %m: i64, %t: index, %hoist: i1, %out: !llvm.ptr) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c0_i32 = arith.constant 0 : i32
  %c1_i32 = arith.constant 1 : i32
  %c0_i64 = arith.constant 0 : i64
  %c1_i64 = arith.constant 1 : i64
  %c128 = arith.constant 128 : i64
  %c512 = arith.constant 512 : i64
  %one = arith.constant 1.0 : f32
  %zero = arith.constant 0.0 : f32
  %rint = memref.extract_aligned_pointer_as_index %r : memref<512x128xf32> -> index
  %ri64 = arith.index_cast %rint : index to i64
  %rptr = llvm.inttoptr %ri64 : i64 to !llvm.ptr
  %seq = scf.if %hoist -> memref<?x128xf32> {
    %a = memref.alloc(%t) : memref<?x128xf32>
    scf.yield %a : memref<?x128xf32>
  } else {
    %b = memref.alloc(%t) : memref<?x128xf32>
    scf.yield %b : memref<?x128xf32>
  }
  scf.for %i = %c0 to %t step %c1 {
    memref.store %one, %seq[%i, %c0] : memref<?x128xf32>
    func.call @lstmRuntimeCpuSgemm(%c0_i32, %c1_i32, %m, %c512, %c128, %one, %h, %c128, %c0_i64, %rptr, %c128, %c0_i64, %zero, %out, %c512, %c0_i64, %c1_i64) : (i32, i32, i64, i64, i64, f32, !llvm.ptr, i64, i64, !llvm.ptr, i64, i64, f32, !llvm.ptr, i64, i64, i64) -> ()
  }
  return
}
func.func @writes_the_weight_maybe(%h: !llvm.ptr, %r: memref<128x128xf32>, %m: i64, %t: index, %hoist: i1, %out: !llvm.ptr) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c0_i32 = arith.constant 0 : i32
  %c1_i32 = arith.constant 1 : i32
  %c0_i64 = arith.constant 0 : i64
  %c1_i64 = arith.constant 1 : i64
  %c128 = arith.constant 128 : i64
  %one = arith.constant 1.0 : f32
  %zero = arith.constant 0.0 : f32
  %rint = memref.extract_aligned_pointer_as_index %r : memref<128x128xf32> -> index
  %ri64 = arith.index_cast %rint : index to i64
  %rptr = llvm.inttoptr %ri64 : i64 to !llvm.ptr
  %seq = scf.if %hoist -> memref<128x128xf32> {
    %a = memref.alloc() : memref<128x128xf32>
    scf.yield %a : memref<128x128xf32>
  } else {
    scf.yield %r : memref<128x128xf32>
  }
  scf.for %i = %c0 to %t step %c1 {
    memref.store %one, %seq[%i, %c0] : memref<128x128xf32>
    func.call @lstmRuntimeCpuSgemm(%c0_i32, %c1_i32, %m, %c128, %c128, %one, %h, %c128, %c0_i64, %rptr, %c128, %c0_i64, %zero, %out, %c128, %c0_i64, %c1_i64) : (i32, i32, i64, i64, i64, f32, !llvm.ptr, i64, i64, !llvm.ptr, i64, i64, f32, !llvm.ptr, i64, i64, i64) -> ()
  }
  return
}
