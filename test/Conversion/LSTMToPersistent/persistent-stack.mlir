// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// RUN: lstm-opt %S/Inputs/persistent-stack.mlir --lstm-to-persistent=stacks=false | FileCheck %s
// RUN: lstm-opt %S/Inputs/persistent-stack.mlir --lstm-to-persistent="always=true stacks=false" | FileCheck %s --check-prefix=ALWAYS
// RUN: lstm-opt %S/Inputs/persistent-stack-index.mlir --lstm-to-persistent=stacks=false | FileCheck %s --check-prefix=INDEX

// (Each layer its own kernel here, stacks=false: the stack's layers as one
// kernel inside the branch are stack-kernel.mlir's.)

// A stack that lstm-wavefront{persistent=true} versioned by batch size (the
// input is what lstm-optimize{persistent=true} makes of two tanh layers of
// 4 units): the kernels' run-time conditions (the cost model's batch, the
// grid fits the SMs, (T + 1) · B rows of 4 below 2^30 for the kernels'
// 32-bit indices) join the branch condition once per layer, and the
// layers become their kernels with no per-step copy of their own; the else
// branch keeps the wavefront, which also runs where a kernel cannot.
// CHECK-LABEL: func.func @dynamic_batch
// CHECK: %[[B:.*]] = tensor.dim %arg0, %c1
// CHECK: %[[BOUND:.*]] = arith.cmpi ule, %[[B]], %c524288
// CHECK: %[[SMS0:.*]] = call @lstmRuntimeGpuMultiprocessors()
// CHECK: arith.cmpi ult, %{{.*}}, %c268435456
// CHECK: %[[RUNS0:.*]] = arith.andi
// CHECK: %[[ONE:.*]] = arith.andi %[[BOUND]], %[[RUNS0]] : i1
// CHECK: %[[SMS1:.*]] = call @lstmRuntimeGpuMultiprocessors()
// CHECK: arith.cmpi ult, %{{.*}}, %c268435456
// CHECK: %[[RUNS1:.*]] = arith.andi
// CHECK: %[[BOTH:.*]] = arith.andi %[[ONE]], %[[RUNS1]] : i1
// CHECK: scf.if %[[BOTH]]
// CHECK-NOT: lstm.persistent_stack
// CHECK-NOT: = lstm.layer
// CHECK: gpu.launch {{.*}} function(@lstm_persistent_dynamic_batch_0)
// CHECK-NOT: = lstm.layer
// CHECK: gpu.launch {{.*}} function(@lstm_persistent_dynamic_batch_1)
// CHECK-NOT: = lstm.layer
// CHECK: } else {
// CHECK-NOT: gpu.launch
// CHECK-NOT: = lstm.layer
// CHECK: scf.for
// CHECK-NOT: lstm.persistent_fallback
// CHECK: return

// always=true forces the kernels at every batch size: the branch is taken
// whatever the batch (the wavefront stays in the else branch, dead).
// ALWAYS-LABEL: func.func @dynamic_batch
// ALWAYS: %[[TRUE:.*]] = arith.constant true
// ALWAYS: scf.if %[[TRUE]]
// ALWAYS: gpu.launch
// ALWAYS: gpu.launch
// ALWAYS: } else {
// ALWAYS-NOT: lstm.persistent_fallback

// A stack that also yields an index computed among its layers: the
// wavefront branch copies its tensors into buffers of their own and yields
// the index as it is.
// INDEX-LABEL: func.func @index_between_layers
// INDEX: scf.if %{{.*}} -> (tensor<?x4xf32>, index, tensor<?x?x4xf32>, tensor<?x4xf32>)
// INDEX: gpu.launch
// INDEX: gpu.launch
// INDEX: } else {
// INDEX: %[[T:.*]] = tensor.dim %arg0, %c0
// INDEX: scf.for
// INDEX: %[[C0:.*]] = bufferization.to_tensor %{{.*}} restrict writable
// INDEX: %[[C1:.*]] = bufferization.to_tensor %{{.*}} restrict writable
// INDEX: %[[C2:.*]] = bufferization.to_tensor %{{.*}} restrict writable
// INDEX: scf.yield %[[C0]], %[[T]], %[[C1]], %[[C2]] : tensor<?x4xf32>, index, tensor<?x?x4xf32>, tensor<?x4xf32>
