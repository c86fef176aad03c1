// lstm-hoist-runtime-checks: a check whose condition the loop does not
// change is made once, before the loop, and only if the loop runs a step.
// RUN: lstm-opt %s -split-input-file -lstm-hoist-runtime-checks | FileCheck %s

// The condition, computed in the loop from values defined outside it (an
// scf.if without memory effects included), moves with the check; the two
// identical checks become one.
// CHECK-LABEL: func.func @invariant
// CHECK-SAME: (%[[M:.*]]: memref<?x8xf32>, %[[N:.*]]: index, %[[T:.*]]: index)
// CHECK: %[[D:.*]] = memref.dim %[[M]]
// CHECK: %[[NONEMPTY:.*]] = arith.cmpi sgt, %[[D]], %{{.*}}
// CHECK: %[[OK:.*]] = scf.if %[[NONEMPTY]] -> (i1)
// CHECK: %[[NOSTEP:.*]] = arith.cmpi sge, %{{.*}}, %[[T]] : index
// CHECK: %[[HOLDS:.*]] = arith.ori %[[OK]], %[[NOSTEP]] : i1
// CHECK: cf.assert %[[HOLDS]], "batch"
// CHECK-NOT: cf.assert
// CHECK: scf.for
// CHECK-NOT: cf.assert
// CHECK: memref.store
// CHECK: return
func.func @invariant(%m: memref<?x8xf32>, %n: index, %T: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %true = arith.constant true
  %f = arith.constant 1.0 : f32
  scf.for %t = %c0 to %T step %c1 {
    %d = memref.dim %m, %c0 : memref<?x8xf32>
    %nonempty = arith.cmpi sgt, %d, %c0 : index
    %ok = scf.if %nonempty -> (i1) {
      %same = arith.cmpi eq, %d, %n : index
      scf.yield %same : i1
    } else {
      scf.yield %true : i1
    }
    cf.assert %ok, "batch"
    memref.store %f, %m[%c0, %c0] : memref<?x8xf32>
    cf.assert %ok, "batch"
  }
  return
}

// -----

// What depends on the step, or on what the loop writes, stays.
// CHECK-LABEL: func.func @variant
// CHECK: scf.for %[[I:.*]] =
// CHECK: %[[IN:.*]] = arith.cmpi slt, %[[I]]
// CHECK: cf.assert %[[IN]], "step"
// CHECK: %[[V:.*]] = memref.load
// CHECK: %[[POS:.*]] = arith.cmpf ogt, %[[V]]
// CHECK: cf.assert %[[POS]], "loaded"
// A division stays too: before a loop without steps it could divide by 0.
// CHECK: %[[Q:.*]] = arith.divui %{{.*}}, %{{.*}} : index
// CHECK: %[[SMALL:.*]] = arith.cmpi ult, %[[Q]]
// CHECK: cf.assert %[[SMALL]], "quotient"
// CHECK: }
func.func @variant(%m: memref<?xf32>, %n: index, %T: index, %d: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  scf.for %t = %c0 to %T step %c1 {
    %in = arith.cmpi slt, %t, %n : index
    cf.assert %in, "step"
    %v = memref.load %m[%c0] : memref<?xf32>
    %pos = arith.cmpf ogt, %v, %zero : f32
    cf.assert %pos, "loaded"
    %q = arith.divui %n, %d : index
    %small = arith.cmpi ult, %q, %n : index
    cf.assert %small, "quotient"
  }
  return
}

// -----

// Nested loops: a check that neither loop changes leaves both, each time
// guarded by its loop's trip count.
// CHECK-LABEL: func.func @nested
// CHECK: %[[EQ:.*]] = arith.cmpi eq
// CHECK: %[[INNER:.*]] = arith.cmpi sge, %{{.*}}, %[[S:[^ ]*]] : index
// CHECK: %[[A:.*]] = arith.ori %[[EQ]], %[[INNER]]
// CHECK: %[[OUTER:.*]] = arith.cmpi sge, %{{.*}}, %[[T:[^ ]*]] : index
// CHECK: %[[B:.*]] = arith.ori %[[A]], %[[OUTER]]
// CHECK: cf.assert %[[B]], "extent"
// CHECK: scf.for
// CHECK: scf.for
// CHECK-NOT: cf.assert
// CHECK: return
func.func @nested(%a: index, %b: index, %T: index, %S: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %t = %c0 to %T step %c1 {
    scf.for %s = %c0 to %S step %c1 {
      %eq = arith.cmpi eq, %a, %b : index
      cf.assert %eq, "extent"
    }
  }
  return
}
