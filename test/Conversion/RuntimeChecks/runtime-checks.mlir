// lstm-generate-runtime-checks: what the tensor ops need of their dynamic
// extents is checked before them, with messages that name the op, its
// source location and the argument it reads.
// RUN: lstm-opt %s -split-input-file -lstm-generate-runtime-checks | FileCheck %s
// Static extents need no check: they fold away.
// RUN: lstm-opt %s -split-input-file -lstm-generate-runtime-checks -canonicalize | FileCheck %s --check-prefix=FOLDED

// The per-layer slices of a stack's initial states (issue 11: a c0 with a
// smaller batch than h0 was read out of bounds).
// CHECK-LABEL: func.func @slice_of_argument
// CHECK: cf.assert %{{.*}}, "run-time check failed: tensor.extract_slice at {{.*}}runtime-checks.mlir:[[@LINE+4]]:8: extract_slice runs out-of-bounds along dimension 1 (operand #0 is argument #1 of @slice_of_argument, declared at {{.*}}runtime-checks.mlir:[[@LINE+1]]:54)"
func.func @slice_of_argument(%h0: tensor<3x?x8xf32>, %c0: tensor<3x?x8xf32>) -> tensor<?x8xf32> {
  %c1 = arith.constant 1 : index
  %b = tensor.dim %h0, %c1 : tensor<3x?x8xf32>
  %s = tensor.extract_slice %c0[1, 0, 0] [1, %b, 8] [1, 1, 1] : tensor<3x?x8xf32> to tensor<?x8xf32>
  return %s : tensor<?x8xf32>
}

// -----

// Elementwise ops: every operand has the extents of the first.
// CHECK-LABEL: func.func @elementwise
// CHECK: %[[DB:.*]] = tensor.dim %arg1, %c0
// CHECK: %[[DA:.*]] = tensor.dim %arg0, %c0
// CHECK: %[[SAME:.*]] = arith.cmpi eq, %[[DB]], %[[DA]] : index
// CHECK: cf.assert %[[SAME]], "run-time check failed: arith.mulf at {{.*}}:[[@LINE+5]]:8: operand #1 has a different extent in dimension 0 than operand #0 (operand #0 is argument #0 of @elementwise, declared at {{[^;]*}}; operand #1 is argument #1 of @elementwise, declared at {{[^)]*}})"
// The static dimension is not checked.
// CHECK-NOT: cf.assert
// CHECK: arith.mulf
func.func @elementwise(%a: tensor<?x8xf32>, %b: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %m = arith.mulf %a, %b : tensor<?x8xf32>
  return %m : tensor<?x8xf32>
}

// -----

// concat: the operands agree but in the concatenated dimension.
// CHECK-LABEL: func.func @concat
// CHECK: cf.assert %{{.*}}, "run-time check failed: tensor.concat {{.*}}: operand #1 has a different extent in dimension 0 than operand #0
// CHECK-NOT: cf.assert {{.*}}dimension 1
// CHECK: tensor.concat
func.func @concat(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %c = tensor.concat dim(1) %a, %b : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  return %c : tensor<?x?xf32>
}

// -----

// expand_shape: the group's output shape multiplies to the source extent.
// CHECK-LABEL: func.func @expand
// CHECK: arith.muli %{{.*}}, %arg1
// CHECK: %[[P:.*]] = arith.muli %{{.*}}, %arg2
// CHECK: %[[D:.*]] = tensor.dim %arg0, %c0
// CHECK: %[[OK:.*]] = arith.cmpi eq, %[[P]], %[[D]]
// CHECK: cf.assert %[[OK]], "run-time check failed: tensor.expand_shape {{.*}}: the output shape of group #0 does not multiply to the source's extent (operand #0 is argument #0 of @expand
func.func @expand(%a: tensor<?x4xf32>, %t: index, %b: index) -> tensor<?x?x4xf32> {
  %e = tensor.expand_shape %a [[0, 1], [2]] output_shape [%t, %b, 4] : tensor<?x4xf32> into tensor<?x?x4xf32>
  return %e : tensor<?x?x4xf32>
}

// -----

// Inside a cell: checked per step (the lowering clones the checks into the
// time loop).
// CHECK-LABEL: func.func @in_a_cell
// CHECK: lstm.layer
// CHECK: cf.assert {{.*}}"run-time check failed: tensor.extract_slice at
// CHECK: lstm.yield
// Static shapes: everything folds.
// FOLDED-LABEL: func.func @in_a_cell
// FOLDED-NOT: cf.assert
// FOLDED: lstm.yield
func.func @in_a_cell(%x: tensor<5x2x8xf32>, %h0: tensor<2x4xf32>, %W: tensor<4x8xf32>) -> tensor<2x4xf32> {
  %hT = lstm.layer forward ins(%x : tensor<5x2x8xf32>) init(%h0 : tensor<2x4xf32>) -> (), (tensor<2x4xf32>) {
  ^bb0(%xt: tensor<2x8xf32>, %h: tensor<2x4xf32>):
    %xs = tensor.extract_slice %xt[0, 0] [2, 4] [1, 1] : tensor<2x8xf32> to tensor<2x4xf32>
    %s = arith.addf %xs, %h : tensor<2x4xf32>
    lstm.yield state(%s : tensor<2x4xf32>)
  }
  return %hT : tensor<2x4xf32>
}

// -----

// The accesses of a kernel are left to the pass that built it: no check
// inside gpu.launch (a branch and a call to the device's assertion handler
// at every access); the host's load is checked.
// CHECK-LABEL: func.func @kernel_accesses
// CHECK: cf.assert {{.*}}memref.load
// CHECK: memref.load
// CHECK: gpu.launch
// CHECK-NOT: cf.assert
// CHECK: memref.load
// CHECK: gpu.terminator
func.func @kernel_accesses(%m: memref<?xf32>, %i: index) -> f32 {
  %c1 = arith.constant 1 : index
  %v = memref.load %m[%i] : memref<?xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %w = memref.load %m[%i] : memref<?xf32>
    memref.store %w, %m[%tx] : memref<?xf32>
    gpu.terminator
  }
  return %v : f32
}
