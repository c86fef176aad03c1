// RUN: lstm-opt %s --lstm-outline-parallel-loops -split-input-file | FileCheck %s

// A step's elementwise loop inside the time loop: the loop moves into
// @step_parallel, its first dimension narrowed to [lo, hi); the buffers and
// the dynamic extent it uses become arguments, constants are cloned. The
// call covers all iterations and says what one costs: the 128 columns of
// a row times the 3 operations of the body (load, add, store).
// CHECK-LABEL: func.func @step
// CHECK-SAME: (%[[X:.*]]: memref<?x128xf32>, %[[Y:.*]]: memref<?x128xf32>, %[[B:.*]]: index, %[[T:.*]]: index)
// CHECK: scf.for
// CHECK-NOT: scf.parallel
// CHECK: %[[N:.*]] = arith.maxsi %[[B]], %{{.*}} : index
// CHECK: %[[WORK:.*]] = arith.constant 384 : index
// CHECK: %[[LO:.*]] = arith.constant 0 : index
// CHECK: call @step_parallel(%[[LO]], %[[N]], %[[WORK]], %[[X]], %[[Y]], %[[B]]) : (index, index, index, memref<?x128xf32>, memref<?x128xf32>, index) -> ()
// CHECK: func.func private @step_parallel(%[[FROM:.*]]: index, %[[HI:.*]]: index, %{{.*}}: index, %[[XX:.*]]: memref<?x128xf32>, %[[YY:.*]]: memref<?x128xf32>, %[[BB:.*]]: index) attributes {lstm.parallel_body}
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C128:.*]] = arith.constant 128 : index
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK: %[[TO:.*]] = arith.minsi %[[BB]], %[[HI]] : index
// CHECK: scf.parallel (%[[I:.*]], %[[J:.*]]) = (%[[FROM]], %[[C0]]) to (%[[TO]], %[[C128]]) step (%[[C1]], %[[C1]])
// CHECK: memref.load %[[XX]][%[[I]], %[[J]]]
// CHECK: memref.store %{{.*}}, %[[YY]][%[[I]], %[[J]]]
func.func @step(%x: memref<?x128xf32>, %y: memref<?x128xf32>, %b: index, %t: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c128 = arith.constant 128 : index
  scf.for %s = %c0 to %t step %c1 {
    scf.parallel (%i, %j) = (%c0, %c0) to (%b, %c128) step (%c1, %c1) {
      %v = memref.load %x[%i, %j] : memref<?x128xf32>
      %w = arith.addf %v, %v : f32
      memref.store %w, %y[%i, %j] : memref<?x128xf32>
      scf.reduce
    }
  }
  return
}

// -----

// Only the outermost loop of a nest moves; two loops of one function get
// two functions.
// CHECK-LABEL: func.func @nest
// CHECK: call @nest_parallel(
// CHECK: call @nest_parallel_0(
// CHECK: func.func private @nest_parallel_0(
// CHECK: func.func private @nest_parallel(
// CHECK: scf.parallel
// CHECK: scf.parallel
func.func @nest(%x: memref<8x16xf32>, %f: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    scf.parallel (%j) = (%c0) to (%c16) step (%c1) {
      memref.store %f, %x[%i, %j] : memref<8x16xf32>
      scf.reduce
    }
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    memref.store %f, %x[%i, %c0] : memref<8x16xf32>
    scf.reduce
  }
  return
}

// -----

// A loop that reduces into a result has no per-range form: left in place.
// CHECK-LABEL: func.func @reduction
// CHECK: scf.parallel
// CHECK-NOT: call
func.func @reduction(%x: memref<8xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  %r = scf.parallel (%i) = (%c0) to (%c8) step (%c1) init (%zero) -> f32 {
    %v = memref.load %x[%i] : memref<8xf32>
    scf.reduce(%v : f32) {
    ^bb0(%a: f32, %b: f32):
      %s = arith.addf %a, %b : f32
      scf.reduce.return %s : f32
    }
  }
  return %r : f32
}

// -----

// A step other than 1 and a lower bound other than 0: iteration k of the
// range is lb + k·step, the end clamped to the upper bound.
// CHECK-LABEL: func.func @strided_range
// CHECK: %[[SPAN:.*]] = arith.subi %{{.*}}, %{{.*}} : index
// CHECK: %[[COUNT:.*]] = arith.ceildivsi %[[SPAN]], %{{.*}} : index
// CHECK: %[[N:.*]] = arith.maxsi %[[COUNT]], %c0
// CHECK: call @strided_range_parallel(%c0{{.*}}, %[[N]],
// CHECK: func.func private @strided_range_parallel(%[[LO:.*]]: index, %[[HI:.*]]: index, %{{.*}}: index, %{{.*}}: f32, %{{.*}}: memref<?xf32>, %[[LB:.*]]: index, %[[UB:.*]]: index, %[[ST:.*]]: index
// CHECK: %[[A:.*]] = arith.muli %[[LO]], %[[ST]]
// CHECK: %[[FROM:.*]] = arith.addi %[[LB]], %[[A]]
// CHECK: %[[B:.*]] = arith.muli %[[HI]], %[[ST]]
// CHECK: %[[END:.*]] = arith.addi %[[LB]], %[[B]]
// CHECK: %[[TO:.*]] = arith.minsi %[[UB]], %[[END]]
// CHECK: scf.parallel (%{{.*}}) = (%[[FROM]]) to (%[[TO]]) step (%[[ST]])
func.func @strided_range(%x: memref<?xf32>, %lb: index, %ub: index, %st: index, %f: f32) {
  scf.parallel (%i) = (%lb) to (%ub) step (%st) {
    memref.store %f, %x[%i] : memref<?xf32>
    scf.reduce
  }
  return
}

// -----

// A task loop (a bufferized scf.forall, a layer's parts: lstm-split-batch)
// becomes @parts_parallel running its iterations [lo, hi) one after the
// other, each told to be worth a thread (2^40 operations); the elementwise
// loop inside it is outlined first, and the task's function calls it (the
// runtime keeps it on the task's thread, or splits it where the task is
// the only one).
// CHECK-LABEL: func.func @parts
// CHECK-SAME: (%[[X:.*]]: memref<?x8xf32>, %[[N:.*]]: index, %[[M:.*]]: index)
// CHECK-NOT: scf.forall
// CHECK: %[[COUNT:.*]] = arith.maxsi %[[N]], %{{.*}} : index
// CHECK: %[[WORK:.*]] = arith.constant 1099511627776 : index
// CHECK: call @parts_parallel{{.*}}(%{{.*}}, %[[COUNT]], %[[WORK]], %[[M]], %[[X]], %[[N]])
// CHECK: func.func private @parts_parallel{{.*}}(%[[LO:.*]]: index, %[[HI:.*]]: index, %{{.*}}: index, %{{.*}}: index, %{{.*}}: memref<?x8xf32>, %{{.*}}: index) attributes {lstm.parallel_body}
// CHECK: scf.for %[[K:.*]] = %[[LO]] to %[[HI]] step %{{.*}} {
// CHECK:   memref.subview
// CHECK:   call @parts_parallel
// CHECK-NOT: scf.parallel
// CHECK: func.func private @parts_parallel{{.*}} attributes {lstm.parallel_body}
// CHECK: scf.parallel
func.func @parts(%x: memref<?x8xf32>, %n: index, %m: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %two = arith.constant 2.0 : f32
  scf.forall (%k) in (%n) {
    %lo = arith.muli %k, %m : index
    %part = memref.subview %x[%lo, 0] [%m, 8] [1, 1] : memref<?x8xf32> to memref<?x8xf32, strided<[8, 1], offset: ?>>
    scf.parallel (%i, %j) = (%c0, %c0) to (%m, %c8) step (%c1, %c1) {
      %v = memref.load %part[%i, %j] : memref<?x8xf32, strided<[8, 1], offset: ?>>
      %w = arith.mulf %v, %two : f32
      memref.store %w, %part[%i, %j] : memref<?x8xf32, strided<[8, 1], offset: ?>>
      scf.reduce
    }
  }
  return
}
