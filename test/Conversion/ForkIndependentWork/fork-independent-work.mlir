// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// RUN: lstm-opt %s --lstm-fork-independent-work -split-input-file | FileCheck %s
// RUN: lstm-opt %s --lstm-fork-independent-work="max-streams=2" -split-input-file | FileCheck %s --check-prefix=TWO
// RUN: lstm-opt %s --lstm-fork-independent-work="max-streams=1" -split-input-file | FileCheck %s --check-prefix=ONE

#mk_km = affine_map<(m, n, k) -> (k, m)>
#mk_kn = affine_map<(m, n, k) -> (k, n)>
#mk_mn = affine_map<(m, n, k) -> (m, n)>

// A backward's end in small: three weight gradients dG^T·X, dG^T·H and
// the bias gradient's product with ones, each into a buffer of its own,
// all reading dG; and a copy of a state gradient. The three products
// touch no buffer another one writes: three streams, each product with the
// zero fill of its accumulator before it; the copy, without a product, on
// the run's stream (0) with the last product. The ops that touch no memory
// (the allocations, the assertion) go before the fork, the frees after the
// join.
// CHECK-LABEL: func.func @weight_gradients
// CHECK-SAME: (%[[DG:.*]]: memref<64x32xf32>, %[[X:.*]]: memref<64x16xf32>, %[[H:.*]]: memref<64x8xf32>, %[[DH:.*]]: memref<4x8xf32>, %[[OK:.*]]: i1)
// CHECK: %[[DW:.*]] = gpu.alloc () : memref<32x16xf32>
// CHECK: %[[DR:.*]] = gpu.alloc () : memref<32x8xf32>
// CHECK: cf.assert %[[OK]]
// CHECK: %[[ONES:.*]] = gpu.alloc () : memref<64xf32>
// CHECK: %[[DB:.*]] = gpu.alloc () : memref<32xf32>
// CHECK: %[[DH0:.*]] = gpu.alloc () : memref<4x8xf32>
// CHECK: %[[N:.*]] = arith.constant 3 : i32
// CHECK: call @lstmRuntimeStreamFork(%[[N]]) : (i32) -> ()
// CHECK: %[[S1:.*]] = arith.constant 1 : i32
// CHECK: call @lstmRuntimeStreamSelect(%[[S1]])
// CHECK-NEXT: linalg.fill ins(%{{.*}} : f32) outs(%[[DR]] : memref<32x8xf32>)
// CHECK-NEXT: linalg.generic {{.*}} ins(%[[DG]], %[[H]] : {{.*}}) outs(%[[DR]] : memref<32x8xf32>)
// CHECK-NOT: call
// CHECK: %[[S2:.*]] = arith.constant 2 : i32
// CHECK: call @lstmRuntimeStreamSelect(%[[S2]])
// CHECK-NEXT: linalg.fill ins(%{{.*}} : f32) outs(%[[ONES]] : memref<64xf32>)
// CHECK-NEXT: linalg.fill ins(%{{.*}} : f32) outs(%[[DB]] : memref<32xf32>)
// CHECK-NEXT: linalg.generic {{.*}} ins(%[[DG]], %[[ONES]] : {{.*}}) outs(%[[DB]] : memref<32xf32>)
// CHECK-NOT: call
// CHECK: %[[S0:.*]] = arith.constant 0 : i32
// CHECK: call @lstmRuntimeStreamSelect(%[[S0]])
// CHECK-NEXT: linalg.fill ins(%{{.*}} : f32) outs(%[[DW]] : memref<32x16xf32>)
// CHECK-NEXT: linalg.generic {{.*}} ins(%[[DG]], %[[X]] : {{.*}}) outs(%[[DW]] : memref<32x16xf32>)
// CHECK-NOT: call
// CHECK: memref.copy %[[DH]], %[[DH0]]
// CHECK-NEXT: call @lstmRuntimeStreamJoin() : () -> ()
// CHECK-NEXT: gpu.dealloc %[[ONES]]
// CHECK-NEXT: return
// CHECK: func.func private @lstmRuntimeStreamFork(i32)
// CHECK: func.func private @lstmRuntimeStreamSelect(i32)
// CHECK: func.func private @lstmRuntimeStreamJoin()

// Two streams at most: the third product goes to the first stream's turn
// again, the run's stream (0), after the first product.
// TWO-LABEL: func.func @weight_gradients
// TWO: call @lstmRuntimeStreamFork(%{{.*}})
// TWO: call @lstmRuntimeStreamSelect
// TWO-NEXT: linalg.fill ins(%{{.*}} : f32) outs(%[[DR:.*]] : memref<32x8xf32>)
// TWO-NEXT: linalg.generic
// TWO-NOT: call
// TWO: call @lstmRuntimeStreamSelect
// TWO-NEXT: linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : memref<32x16xf32>)
// TWO-NEXT: linalg.generic
// TWO-NOT: call
// TWO: linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : memref<64xf32>)
// TWO-NEXT: linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : memref<32xf32>)
// TWO-NEXT: linalg.generic
// TWO-NOT: call
// TWO: memref.copy
// TWO-NEXT: call @lstmRuntimeStreamJoin

// One stream: the code as it was.
// ONE-LABEL: func.func @weight_gradients
// ONE-NOT: lstmRuntimeStream
// ONE: return
func.func @weight_gradients(%dg: memref<64x32xf32>, %x: memref<64x16xf32>, %h: memref<64x8xf32>, %dh: memref<4x8xf32>, %ok: i1) -> (memref<32x16xf32>, memref<32x8xf32>, memref<32xf32>, memref<4x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %dw = gpu.alloc () : memref<32x16xf32>
  linalg.fill ins(%zero : f32) outs(%dw : memref<32x16xf32>)
  linalg.generic {indexing_maps = [#mk_km, #mk_kn, #mk_mn], iterator_types = ["parallel", "parallel", "reduction"]} ins(%dg, %x : memref<64x32xf32>, memref<64x16xf32>) outs(%dw : memref<32x16xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  }
  %dr = gpu.alloc () : memref<32x8xf32>
  cf.assert %ok, "a run-time check"
  linalg.fill ins(%zero : f32) outs(%dr : memref<32x8xf32>)
  linalg.generic {indexing_maps = [#mk_km, #mk_kn, #mk_mn], iterator_types = ["parallel", "parallel", "reduction"]} ins(%dg, %h : memref<64x32xf32>, memref<64x8xf32>) outs(%dr : memref<32x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  }
  %ones = gpu.alloc () : memref<64xf32>
  linalg.fill ins(%one : f32) outs(%ones : memref<64xf32>)
  %db = gpu.alloc () : memref<32xf32>
  linalg.fill ins(%zero : f32) outs(%db : memref<32xf32>)
  linalg.generic {indexing_maps = [affine_map<(m, k) -> (k, m)>, affine_map<(m, k) -> (k)>, affine_map<(m, k) -> (m)>], iterator_types = ["parallel", "reduction"]} ins(%dg, %ones : memref<64x32xf32>, memref<64xf32>) outs(%db : memref<32xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  }
  gpu.dealloc %ones : memref<64xf32>
  %dh0 = gpu.alloc () : memref<4x8xf32>
  memref.copy %dh, %dh0 : memref<4x8xf32> to memref<4x8xf32>
  return %dw, %dr, %db, %dh0 : memref<32x16xf32>, memref<32x8xf32>, memref<32xf32>, memref<4x8xf32>
}

// -----

#mk_km = affine_map<(m, n, k) -> (k, m)>
#mk_kn = affine_map<(m, n, k) -> (k, n)>
#mk_mn = affine_map<(m, n, k) -> (m, n)>

// The second product reads what the first writes: one group, one stream.
// CHECK-LABEL: func.func @dependent
// CHECK-NOT: lstmRuntimeStream
// CHECK: return
func.func @dependent(%a: memref<16x16xf32>, %b: memref<16x16xf32>) -> memref<16x16xf32> {
  %zero = arith.constant 0.0 : f32
  %t = gpu.alloc () : memref<16x16xf32>
  linalg.fill ins(%zero : f32) outs(%t : memref<16x16xf32>)
  linalg.matmul ins(%a, %b : memref<16x16xf32>, memref<16x16xf32>) outs(%t : memref<16x16xf32>)
  %u = gpu.alloc () : memref<16x16xf32>
  linalg.fill ins(%zero : f32) outs(%u : memref<16x16xf32>)
  linalg.matmul ins(%t, %b : memref<16x16xf32>, memref<16x16xf32>) outs(%u : memref<16x16xf32>)
  return %u : memref<16x16xf32>
}

// -----

// Two products into two arguments: alias analysis cannot tell two
// arguments apart, and both write, so they stay in order on one stream.
// CHECK-LABEL: func.func @written_arguments
// CHECK-NOT: lstmRuntimeStream
// CHECK: return
func.func @written_arguments(%a: memref<16x16xf32>, %b: memref<16x16xf32>, %c: memref<16x16xf32>, %d: memref<16x16xf32>) {
  linalg.matmul ins(%a, %b : memref<16x16xf32>, memref<16x16xf32>) outs(%c : memref<16x16xf32>)
  linalg.matmul ins(%a, %b : memref<16x16xf32>, memref<16x16xf32>) outs(%d : memref<16x16xf32>)
  return
}

// -----

// Host memory (memref.alloc: what the host reads) is the host's work, in
// program order; and an op with memory effects the pass does not know (a
// call) ends a run: each side of it has one product.
// CHECK-LABEL: func.func @host_and_calls
// CHECK-NOT: lstmRuntimeStream
// CHECK: return
func.func private @opaque()
func.func @host_and_calls(%a: memref<16x16xf32>, %b: memref<16x16xf32>) -> (memref<16x16xf32>, memref<16x16xf32>, memref<16x16xf32>) {
  %t = memref.alloc () : memref<16x16xf32>
  linalg.matmul ins(%a, %b : memref<16x16xf32>, memref<16x16xf32>) outs(%t : memref<16x16xf32>)
  %u = gpu.alloc () : memref<16x16xf32>
  linalg.matmul ins(%a, %b : memref<16x16xf32>, memref<16x16xf32>) outs(%u : memref<16x16xf32>)
  func.call @opaque() : () -> ()
  %v = gpu.alloc () : memref<16x16xf32>
  linalg.matmul ins(%a, %b : memref<16x16xf32>, memref<16x16xf32>) outs(%v : memref<16x16xf32>)
  return %t, %u, %v : memref<16x16xf32>, memref<16x16xf32>, memref<16x16xf32>
}

// -----

// A branch's block is a run of its own; its results (one device buffer on
// either path) are device buffers after it. Here the branch holds two
// independent products, and the two products after it read its result.
// CHECK-LABEL: func.func @in_branches
// CHECK: %[[R:.*]] = scf.if
// CHECK: call @lstmRuntimeStreamFork
// CHECK: linalg.matmul
// CHECK: linalg.matmul
// CHECK: call @lstmRuntimeStreamJoin
// CHECK: scf.yield
// CHECK: } else {
// CHECK-NOT: lstmRuntimeStream
// CHECK: }
// CHECK: call @lstmRuntimeStreamFork
// CHECK: call @lstmRuntimeStreamSelect
// CHECK: linalg.matmul ins(%[[R]]
// CHECK: call @lstmRuntimeStreamSelect
// CHECK: linalg.matmul ins(%[[R]]
// CHECK: call @lstmRuntimeStreamJoin
func.func @in_branches(%a: memref<16x16xf32>, %b: memref<16x16xf32>, %p: i1) -> (memref<16x16xf32>, memref<16x16xf32>) {
  %r = scf.if %p -> memref<16x16xf32> {
    %t = gpu.alloc () : memref<16x16xf32>
    linalg.matmul ins(%a, %b : memref<16x16xf32>, memref<16x16xf32>) outs(%t : memref<16x16xf32>)
    %u = gpu.alloc () : memref<16x16xf32>
    linalg.matmul ins(%a, %b : memref<16x16xf32>, memref<16x16xf32>) outs(%u : memref<16x16xf32>)
    gpu.dealloc %u : memref<16x16xf32>
    scf.yield %t : memref<16x16xf32>
  } else {
    %t = gpu.alloc () : memref<16x16xf32>
    scf.yield %t : memref<16x16xf32>
  }
  %v = gpu.alloc () : memref<16x16xf32>
  linalg.matmul ins(%r, %b : memref<16x16xf32>, memref<16x16xf32>) outs(%v : memref<16x16xf32>)
  %w = gpu.alloc () : memref<16x16xf32>
  linalg.matmul ins(%r, %a : memref<16x16xf32>, memref<16x16xf32>) outs(%w : memref<16x16xf32>)
  return %v, %w : memref<16x16xf32>, memref<16x16xf32>
}

// -----

// A persistent kernel (a named launch: its grid barriers need every SM)
// is not work that shares the GPU: it ends the run.
// CHECK-LABEL: func.func @named_launch
// CHECK-NOT: lstmRuntimeStream
// CHECK: return
func.func @named_launch(%a: memref<16x16xf32>, %b: memref<16x16xf32>) -> (memref<16x16xf32>, memref<16x16xf32>) {
  %c1 = arith.constant 1 : index
  %t = gpu.alloc () : memref<16x16xf32>
  linalg.matmul ins(%a, %b : memref<16x16xf32>, memref<16x16xf32>) outs(%t : memref<16x16xf32>)
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) module(@lstm_kernels) function(@lstm_persistent) {
    gpu.terminator
  }
  %u = gpu.alloc () : memref<16x16xf32>
  linalg.matmul ins(%a, %b : memref<16x16xf32>, memref<16x16xf32>) outs(%u : memref<16x16xf32>)
  return %t, %u : memref<16x16xf32>, memref<16x16xf32>
}

// -----

// A loop or branch of device work is work too: here two weight gradients
// as lstm-split-tf32-gemms leaves them, each behind its check of the depth,
// in parts that a loop adds into the buffer the branch yields. The two
// branches touch no buffer the other writes: two streams. The view of the
// first one's result touches no memory but reads what the run's work
// defines: it ends the run, so the product reading it runs after the join,
// on the run's stream.
#km = affine_map<(m, n, k) -> (k, m)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>
// CHECK-LABEL: func.func @structured_work
// CHECK: call @lstmRuntimeStreamFork
// CHECK: call @lstmRuntimeStreamSelect
// CHECK: %[[DR:.*]] = scf.if
// CHECK: scf.for
// CHECK: call @lstmRuntimeStreamSelect
// CHECK: %[[DW:.*]] = scf.if
// CHECK: scf.for
// CHECK: call @lstmRuntimeStreamJoin
// CHECK-NEXT: memref.subview %[[DW]]
// CHECK-NOT: lstmRuntimeStream
// CHECK: linalg.matmul
// CHECK: return
// ONE-LABEL: func.func @structured_work
// ONE-NOT: lstmRuntimeStream
// ONE: return
func.func @structured_work(%dg: memref<?x32xf32>, %x: memref<?x16xf32>, %h: memref<?x16xf32>, %deep: i1, %parts: index) -> (memref<32x16xf32>, memref<8x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %dw = scf.if %deep -> memref<32x16xf32> {
    %acc = gpu.alloc () : memref<32x16xf32>
    linalg.fill ins(%zero : f32) outs(%acc : memref<32x16xf32>)
    scf.for %i = %c0 to %parts step %c1 {
      %n = memref.dim %dg, %c0 : memref<?x32xf32>
      %part = gpu.alloc (%n) : memref<?x32xf32>
      linalg.copy ins(%dg : memref<?x32xf32>) outs(%part : memref<?x32xf32>)
      linalg.generic {indexing_maps = [#km, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
          ins(%part, %x : memref<?x32xf32>, memref<?x16xf32>) outs(%acc : memref<32x16xf32>) {
      ^bb0(%a: f32, %b: f32, %o: f32):
        %m = arith.mulf %a, %b : f32
        %s = arith.addf %o, %m : f32
        linalg.yield %s : f32
      }
      gpu.dealloc %part : memref<?x32xf32>
    }
    scf.yield %acc : memref<32x16xf32>
  } else {
    %acc = gpu.alloc () : memref<32x16xf32>
    linalg.fill ins(%zero : f32) outs(%acc : memref<32x16xf32>)
    linalg.generic {indexing_maps = [#km, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%dg, %x : memref<?x32xf32>, memref<?x16xf32>) outs(%acc : memref<32x16xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %m = arith.mulf %a, %b : f32
      %s = arith.addf %o, %m : f32
      linalg.yield %s : f32
    }
    scf.yield %acc : memref<32x16xf32>
  }
  %dr = scf.if %deep -> memref<32x16xf32> {
    %acc = gpu.alloc () : memref<32x16xf32>
    linalg.fill ins(%zero : f32) outs(%acc : memref<32x16xf32>)
    scf.for %i = %c0 to %parts step %c1 {
      linalg.generic {indexing_maps = [#km, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
          ins(%dg, %h : memref<?x32xf32>, memref<?x16xf32>) outs(%acc : memref<32x16xf32>) {
      ^bb0(%a: f32, %b: f32, %o: f32):
        %m = arith.mulf %a, %b : f32
        %s = arith.addf %o, %m : f32
        linalg.yield %s : f32
      }
    }
    scf.yield %acc : memref<32x16xf32>
  } else {
    %acc = gpu.alloc () : memref<32x16xf32>
    scf.yield %acc : memref<32x16xf32>
  }
  %top = memref.subview %dw[0, 0] [8, 16] [1, 1] : memref<32x16xf32> to memref<8x16xf32, strided<[16, 1]>>
  %y = gpu.alloc () : memref<8x16xf32>
  %sq = gpu.alloc () : memref<16x16xf32>
  linalg.matmul ins(%top, %sq : memref<8x16xf32, strided<[16, 1]>>, memref<16x16xf32>) outs(%y : memref<8x16xf32>)
  gpu.dealloc %sq : memref<16x16xf32>
  gpu.dealloc %dr : memref<32x16xf32>
  return %dw, %y : memref<32x16xf32>, memref<8x16xf32>
}
