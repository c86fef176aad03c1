// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// RUN: lstm-opt %S/Inputs/stack-chains.mlir --lstm-to-persistent=always=true | FileCheck %s
// RUN: lstm-opt %S/Inputs/stack-chains.mlir --lstm-to-persistent | FileCheck %s --check-prefix=COST
// RUN: lstm-opt %S/Inputs/stack-chains.mlir --lstm-to-persistent=per-step-fallback=false | FileCheck %s --check-prefix=NO-FALLBACK
// RUN: lstm-opt %S/Inputs/stack-chains.mlir --lstm-to-persistent="always=true stacks=false" | FileCheck %s --check-prefix=APART
// RUN: lstm-opt %S/Inputs/persistent-stack.mlir --lstm-to-persistent | FileCheck %s --check-prefix=BRANCH
// RUN: lstm-opt %S/Inputs/stack-backward.mlir --lstm-to-persistent=always=true | FileCheck %s --check-prefix=BACKWARD
// RUN: lstm-opt %S/Inputs/stack-wide.mlir --lstm-to-persistent | FileCheck %s --check-prefix=WIDE
// RUN: lstm-opt %S/Inputs/stack-wide.mlir --lstm-to-persistent=block-size=512 | FileCheck %s --check-prefix=WIDE512
// RUN: lstm-opt %S/../../../examples/janet_stack3.mlir --lstm-combine-gate-gemms --lstm-optimize=persistent=true --lstm-to-persistent=always=true | FileCheck %s --check-prefix=JANET

// A chain of three layers is one kernel: its 16 blocks split among the
// layers (4, 4 and 8 units, one a block), layer l's blocks running its step
// t in iteration t + l of T + 2, with a grid barrier after each. Layers 1
// and 2 stage the step's slice of the layer before's output (its output
// buffer, at the step) beside their state: their input projections are part
// of their steps, the hoisted GEMMs are gone.
// CHECK-LABEL: func.func @three_layers
// CHECK: %[[T:.*]] = tensor.dim %expanded, %c0
// CHECK: %[[Y0:.*]] = memref.alloc(%{{.*}}) : memref<?x?x4xf32>
// CHECK: %[[Y1:.*]] = memref.alloc(%{{.*}}) : memref<?x?x4xf32>
// CHECK: %[[Y2:.*]] = memref.alloc(%{{.*}}) : memref<?x?x8xf32>
// CHECK: %[[ITERATIONS:.*]] = arith.addi %[[T]], %c2
// CHECK-NOT: lstm.gate
// CHECK: gpu.launch blocks(%[[BLOCK:[a-z0-9]+]], {{.*}} in (%{{[a-z0-9]+}} = %c16{{[_0-9]*}}, {{.*}} function(@lstm_persistent_three_layers_0)
// CHECK: %[[L0:.*]] = arith.subi %[[BLOCK]], %c0
// CHECK: arith.cmpi ult, %[[L0]], %c4
// CHECK: scf.for %[[I0:.*]] = %{{.*}} to %[[ITERATIONS]]
// CHECK: arith.cmpi ult, %[[I0]], %[[T]]
// CHECK: lstm.grid_barrier
// CHECK: %[[L1:.*]] = arith.subi %[[BLOCK]], %c4
// CHECK: arith.cmpi ult, %[[L1]], %c4
// CHECK: scf.for %[[I1:.*]] = %{{.*}} to %[[ITERATIONS]]
// CHECK: %[[S1:.*]] = arith.subi %[[I1]], %c1
// CHECK: arith.cmpi ult, %[[S1]], %[[T]]
// CHECK: nvgpu.device_async_copy %[[Y0]][%[[S1]],
// CHECK: lstm.grid_barrier
// CHECK: %[[L2:.*]] = arith.subi %[[BLOCK]], %c8
// CHECK: arith.cmpi ult, %[[L2]], %c8
// CHECK: scf.for %[[I2:.*]] = %{{.*}} to %[[ITERATIONS]]
// CHECK: %[[S2:.*]] = arith.subi %[[I2]], %c2
// CHECK: nvgpu.device_async_copy %[[Y1]][%[[S2]],
// CHECK: memref.store %{{.*}}, %[[Y2]][%[[S2]],
// CHECK: lstm.grid_barrier
// CHECK-NOT: gpu.launch
// CHECK: return

// Reverse layers: layer 1's step s = T - 1 - t reads layer 0's output of
// step s, written in the iteration before.
// CHECK-LABEL: func.func @reverse_layers
// CHECK: %[[RT:.*]] = tensor.dim %expanded, %c0
// CHECK: %[[RY0:.*]] = memref.alloc(%{{.*}}) : memref<?x?x4xf32>
// CHECK: gpu.launch blocks({{.*}} in (%{{[a-z0-9]+}} = %c8{{[_0-9]*}},
// CHECK: arith.subi %{{.*}}, %c4
// CHECK: scf.for %[[RI:.*]] =
// CHECK: %[[RS:.*]] = arith.subi %[[RI]], %c1
// CHECK: %[[LASTSTEP:.*]] = arith.subi %[[RT]], %c1
// CHECK: %[[STEP:.*]] = arith.subi %[[LASTSTEP]], %[[RS]]
// CHECK: nvgpu.device_async_copy %[[RY0]][%[[STEP]],
// CHECK-NOT: gpu.launch
// CHECK: return

// No chain: a forward layer feeding a reverse one, and a layer whose final
// state the next one starts from (the kernel writes it only at its end).
// CHECK-LABEL: func.func @forward_then_reverse
// CHECK: gpu.launch
// CHECK: lstm.gate identity
// CHECK: gpu.launch
// CHECK-LABEL: func.func @output_read_between
// CHECK: gpu.launch
// CHECK: lstm.gate identity
// CHECK: gpu.launch

// No chain either where layer 0's output is complete only at the block
// barrier that ends its step (its product reads a value of the step, its
// output comes from the second phase): layer 1 would read it in the next
// iteration with no grid barrier in between.
// CHECK-LABEL: func.func @output_in_last_phase
// CHECK: gpu.launch
// CHECK: lstm.block_barrier{{$}}
// CHECK: lstm.gate identity
// CHECK: gpu.launch
// CHECK: return

// With the cost model the stack's kernel runs behind its run-time
// conditions (the batch bound of its layers' own kernels, the grid fits the
// SMs), else the layers as they were, left to the per-step lowering. That
// branch yields what the per-step lowering makes views of a state's stack
// (the outputs; the finals) in buffers of their own, as the kernel's are:
// views would give the scf.if strided results, copied after it whichever
// branch ran.
// COST-LABEL: func.func @three_layers
// COST: %[[B:.*]] = tensor.dim %expanded, %c1
// COST: arith.cmpi ule, %[[B]], %c262144
// COST: call @lstmRuntimeGpuMultiprocessors()
// COST: arith.cmpi ule, %c16
// COST: scf.if
// COST-NOT: = lstm.layer
// COST: gpu.launch {{.*}} function(@lstm_persistent_three_layers_0)
// COST-NOT: = lstm.layer
// COST: } else {
// COST-NOT: gpu.launch
// COST: %[[OUT0:.*]], %[[FIN0:.*]] = lstm.layer {{.*}}lstm.persistent_fallback
// COST: %[[OUT1:.*]], %[[FIN1:.*]] = lstm.layer {{.*}}lstm.persistent_fallback
// COST: %[[OUT2:.*]], %[[FIN2:.*]] = lstm.layer {{.*}}lstm.persistent_fallback
// COST-NOT: gpu.launch
// COST: %[[VIEW0:.*]] = bufferization.to_buffer %[[OUT0]]
// COST: %[[BUF0:.*]] = memref.alloc({{.*}}) : memref<?x?x4xf32>
// COST: memref.copy %[[VIEW0]], %[[BUF0]]
// COST: %[[Y0:.*]] = bufferization.to_tensor %[[BUF0]]
// COST-COUNT-5: memref.copy
// COST: scf.yield %[[Y0]],
// COST-NEXT: }
// COST-NOT: memref.copy
// COST: return

// Without the per-step fallback, the stack's else branch has no per-step
// layer: each calls the runtime and yields empty tensors; the projections
// between them are left to the canonicalizer.
// NO-FALLBACK-LABEL: func.func @three_layers
// NO-FALLBACK: scf.if
// NO-FALLBACK: gpu.launch {{.*}} function(@lstm_persistent_three_layers_0)
// NO-FALLBACK: } else {
// NO-FALLBACK-NOT: lstm.layer
// NO-FALLBACK-NOT: memref.copy
// NO-FALLBACK-COUNT-3: call @lstmRuntimeMissingPerStepFallback
// NO-FALLBACK-NOT: lstm.layer
// NO-FALLBACK-NOT: memref.copy
// NO-FALLBACK: scf.yield
// NO-FALLBACK-NEXT: }
// NO-FALLBACK: return

// stacks=false: a kernel per layer, the projections hoisted.
// APART-LABEL: func.func @three_layers
// APART: gpu.launch
// APART: lstm.gate identity
// APART: gpu.launch
// APART: lstm.gate identity
// APART: gpu.launch
// APART-LABEL: func.func @reverse_layers

// In the branch that lstm-wavefront{persistent=true} keeps for the
// kernels, the stack's kernel alone, its run-time conditions (its own
// bound, 2^20 here) replacing the branch's (the input's 2^19, judged
// before the compute type was known); the wavefront in the else branch.
// The kernel asserts that each link's reshape gives the later layer the
// earlier one's [T, B] (the expansion's extents are values of the IR).
// BRANCH-LABEL: func.func @dynamic_batch
// BRANCH-NOT: arith.cmpi ule, %{{.*}}, %c524288
// BRANCH: arith.cmpi ule, %{{.*}}, %c1048576
// BRANCH: call @lstmRuntimeGpuMultiprocessors()
// BRANCH: arith.cmpi ult, %{{.*}}, %c268435456
// BRANCH: %[[RUNS:.*]] = arith.andi
// BRANCH-NOT: arith.andi
// BRANCH: scf.if %[[RUNS]]
// BRANCH-NOT: = lstm.layer
// BRANCH: cf.assert %{{.*}}, "lstm.layer: the input sequence reshaped from the layer before's output has a different length
// BRANCH: cf.assert %{{.*}}, "lstm.layer: the input sequence reshaped from the layer before's output has a different batch size
// BRANCH: gpu.launch {{.*}} function(@lstm_persistent_dynamic_batch_0)
// BRANCH-NOT: gpu.launch
// BRANCH-NOT: = lstm.layer
// BRANCH: } else {
// BRANCH-NOT: gpu.launch
// BRANCH: scf.for
// BRANCH-NOT: gpu.launch
// BRANCH: return

// The backward of a stack: its reverse layers in one kernel, layer 0's dy
// (dG^1 · W^1, a matmul whose weight the kernel reads transposed) part of
// its first phase, staged from layer 1's dG buffer at the step; the weight
// and bias gradients that read dG^1 between the layers move after the
// kernel. A step of each ends in a block barrier (its products read only
// the step's dG): one grid barrier an iteration, after the first phases.
// BACKWARD-LABEL: func.func @two_layers_backward
// BACKWARD: %[[DG1:.*]] = memref.alloc(%{{.*}}, %{{.*}}) : memref<?x?x4xf32>
// BACKWARD-NOT: linalg.generic
// BACKWARD: gpu.launch blocks({{.*}} in (%{{[a-z0-9]+}} = %c8{{[_0-9]*}},
// BACKWARD: lstm.grid_barrier %{{.*}}[%c1
// BACKWARD: lstm.grid_barrier
// BACKWARD-NOT: lstm.grid_barrier
// BACKWARD: lstm.block_barrier
// BACKWARD-NOT: lstm.grid_barrier
// BACKWARD: arith.remui %{{.*}}, %c2
// BACKWARD: lstm.grid_barrier %{{.*}}[%c1
// BACKWARD: scf.for %[[I1:[a-z0-9]+]] = %c0
// BACKWARD: %[[T1:.*]] = arith.subi %[[I1]], %c1
// BACKWARD: %[[STEP:.*]] = arith.subi %{{.*}}, %[[T1]]
// BACKWARD: nvgpu.device_async_copy %[[DG1]][%[[STEP]],
// BACKWARD: lstm.grid_barrier
// BACKWARD-NOT: lstm.grid_barrier
// BACKWARD: lstm.block_barrier
// BACKWARD-NOT: lstm.grid_barrier
// BACKWARD: arith.remui %{{.*}}, %c2
// BACKWARD-NOT: gpu.launch
// BACKWARD: linalg.generic
// BACKWARD: return

// JANET's three layers (lstm-combine-gate-gemms made each layer's input
// weights one [3N, K] concatenation, assembled between the layers): the
// kernel reads the concatenations, which stay where the hoisted products
// they fed are gone.
// JANET-LABEL: func.func @forward
// JANET: scf.if
// JANET: %[[W1:.*]] = tensor.concat dim(0)
// JANET: %[[R1:.*]] = tensor.concat dim(0)
// JANET: %[[W2:.*]] = tensor.concat dim(0)
// JANET: %[[R2:.*]] = tensor.concat dim(0)
// JANET: bufferization.to_buffer %[[W1]] read_only : tensor<384x128xf32>
// JANET: bufferization.to_buffer %[[W2]] read_only : tensor<384x128xf32>
// JANET: gpu.launch
// JANET-NOT: gpu.launch
// JANET: } else {

// H = 512 (the latency configuration): a unit of layer 1 keeps 4 x 2 x 512
// weights, 128 floats a lane, which blocks of 256 threads hold (a lane may
// use 255 registers): 64 + 64 blocks of 8 units, a warp each. With 512
// threads (64 registers of weights a lane) no stack: a kernel a layer.
// WIDE-LABEL: func.func @forward
// WIDE: gpu.launch blocks({{.*}} in (%{{[a-z0-9]+}} = %c128{{[_0-9]*}}, {{.*}} threads({{.*}} in (%{{[a-z0-9]+}} = %c256{{[_0-9]*}},
// WIDE: arith.cmpi ult, %{{.*}}, %c64
// WIDE: arith.subi %{{.*}}, %c64
// WIDE: arith.cmpi ult, %{{.*}}, %c64
// WIDE-NOT: gpu.launch
// WIDE512-LABEL: func.func @forward
// WIDE512: gpu.launch
// WIDE512: gpu.launch
