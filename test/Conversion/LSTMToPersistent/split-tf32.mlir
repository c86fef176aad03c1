// The fp32 compute type on tensor cores (lstm-to-persistent's split-tf32,
// 3xTF32): each operand is its TF32 rounding (big) plus the TF32 rounding
// of what that leaves (small), and every instruction of the TF32 kernel
// becomes three: small · big, big · small and big · big.
// RUN: lstm-opt %S/../../../examples/lstm.mlir --lstm-optimize=wavefront=false "--lstm-to-persistent=always=true tensor-cores=true split-tf32=true" | FileCheck %s
// Without tensor-cores the option changes nothing: the dot products.
// RUN: lstm-opt %S/../../../examples/lstm.mlir --lstm-optimize=wavefront=false "--lstm-to-persistent=always=true split-tf32=true" | FileCheck %s --check-prefix=FMA
// The weights take the registers they take in TF32: H = 320 (K = 320) in
// 512-thread blocks splits the depth 2 ways to fit, as TF32 does
// (tensor-cores.mlir, FIT).
// RUN: lstm-opt %S/Inputs/layer-h320.mlir --lstm-optimize=wavefront=false "--lstm-to-persistent=always=true tensor-cores=true tensor-cores-from-batch=1 shared-memory=229376 tensor-cores-split-depth=0 split-tf32=true" | FileCheck %s --check-prefix=FIT
// Under the cost model the tensor cores start where the dot products stop
// or where their warps would take more than 4 rows one at a time (12 in
// groups),
// at 64 at the latest: an LSTM of H = 128, whose dot products run to 512
// in 4 tiles of rows and 2 row groups, from 64 (TF32: 16); a layer of
// H = 1000, whose dot products stop at 4, from 5, and to 65, where TF32
// stops at 33: twice the multiply-adds a step (2^28 / 4 · 1000^2: 67)
// against the fp32 per-step GEMMs, and 2^16 staged floats a step (65).
// RUN: lstm-opt %S/../../../examples/lstm.mlir --lstm-optimize=wavefront=false "--lstm-to-persistent=tensor-cores=true split-tf32=true" | FileCheck %s --check-prefix=FROM64
// RUN: lstm-opt %S/Inputs/layer-h1000.mlir --lstm-optimize=wavefront=false "--lstm-to-persistent=tensor-cores=true split-tf32=true shared-memory=229376" | FileCheck %s --check-prefix=FROM5
// A stack's kernel alike, by the layout of the stack's kernel of dot
// products: three layers of H = 128 in one kernel, its dot products to 512
// in 2 tiles of rows and 2 row groups, a warp taking its rows in groups:
// the tensor cores from 49, the stack's kernel of dot products below.
// RUN: lstm-opt %S/../../../examples/stack3.mlir --lstm-optimize=wavefront=false "--lstm-to-persistent=tensor-cores=true split-tf32=true" | FileCheck %s --check-prefix=STACK
// The layers of a stack branch (lstm-optimize's persistent=true) that do
// not run as one kernel get a layer's kernels each: appleyard's four
// layers of H = 512, whose kernels of dot products (256 threads, 2 tiles
// of rows, a row at a time) run to 16, on tensor cores from 9; on tensor
// cores the kernels run to 3/8 of their own bound (128), not to the bound
// that lstm-optimize gave the branch (16, the dot products'), as the
// schedule report says.
// RUN: lstm-opt %S/Inputs/stack4-h512.mlir --lstm-optimize=persistent=true "--lstm-to-persistent=tensor-cores=true split-tf32=true shared-memory=229376" | FileCheck %s --check-prefix=LAYERS
// RUN: lstm-opt %S/Inputs/stack4-h512.mlir --lstm-optimize=persistent=true --lstm-schedule-report=persistent=true -o /dev/null 2>&1 | FileCheck %s --check-prefix=REPORT
// In TF32 and bf16, against the wavefront's TF32 or bf16 GEMMs, to the
// branch's bound.
// RUN: lstm-opt %S/Inputs/stack4-h512.mlir --lstm-optimize=persistent=true "--lstm-schedule-report=persistent=true compute-type=tf32" -o /dev/null 2>&1 | FileCheck %s --check-prefix=REPORT-TF32
// RUN: lstm-opt %S/Inputs/stack4-h512.mlir --lstm-optimize=persistent=true "--lstm-schedule-report=persistent=true compute-type=bf16" -o /dev/null 2>&1 | FileCheck %s --check-prefix=REPORT-BF16
// RUN: lstm-opt %S/Inputs/stack4-h512.mlir --lstm-optimize=persistent=true "--lstm-to-persistent=tensor-cores=true bf16-operands=true shared-memory=229376" | FileCheck %s --check-prefix=LAYERS-BF16
// RUN: not lstm-opt %S/../../../examples/lstm.mlir "--lstm-to-persistent=tensor-cores=true split-tf32=true bf16-operands=true" 2>&1 | FileCheck %s --check-prefix=BAD

// CHECK-LABEL: func.func @forward
// CHECK: gpu.launch
// The weights' fp32 bits in the registers, before the time loop.
// CHECK: arith.bitcast %{{.*}} : f32 to i32
// CHECK: scf.for
// In the loop, the mask of TF32's bits from an instruction LLVM does not
// hoist; each staged value and each weight split as it is used: big its
// bits masked, small the rest (exact in fp32).
// CHECK: vector.load {{.*}} vector<4xf32>
// CHECK: vector.load {{.*}} vector<4xf32>
// CHECK: %[[MASK:.*]] = llvm.inline_asm has_side_effects "mov.b32 $0, -8192;", "=r"
// CHECK: %[[BITS:.*]] = arith.bitcast %{{.*}} : f32 to i32
// CHECK: %[[BIG:.*]] = arith.andi %[[BITS]], %[[MASK]]
// CHECK: %[[BIGF:.*]] = arith.bitcast %[[BIG]] : i32 to f32
// CHECK: %[[V:.*]] = arith.bitcast %[[BITS]] : i32 to f32
// CHECK: %[[SMALL:.*]] = arith.subf %[[V]], %[[BIGF]]
// CHECK: arith.bitcast %[[SMALL]] : f32 to i32
// CHECK: %[[WBIG:.*]] = arith.andi %{{.*}}, %[[MASK]]
// CHECK-NOT: llvm.inline_asm
// An LSTM of H = 128: 16 TF32 instructions a product, 48 here.
// CHECK-COUNT-48: lstm.warp_mma
// CHECK-NOT: lstm.warp_mma
// CHECK: lstm.grid_barrier

// FMA-LABEL: func.func @forward
// FMA-NOT: lstm.warp_mma
// FMA: gpu.shuffle xor

// 20 chunks of 16, 10 a warp, 6 instructions each.
// FIT-LABEL: func.func @forward
// FIT: gpu.launch {{.*}} threads({{.*}}) in (%{{.*}} = %c512,
// FIT: scf.for
// FIT-COUNT-60: lstm.warp_mma
// FIT-NOT: lstm.warp_mma
// FIT: lstm.warps_barrier %{{.*}} warps 2 : i32

// FROM64-LABEL: func.func @forward
// FROM64: arith.cmpi ule, %{{.*}}, %c512 : index
// FROM64: arith.cmpi uge, %{{.*}}, %c64 : index
// FROM64: lstm.warp_mma

// FROM5-LABEL: func.func @forward
// FROM5: arith.cmpi ule, %{{.*}}, %c65
// FROM5: arith.cmpi uge, %{{.*}}, %c5 : index
// FROM5: lstm.warp_mma

// STACK-LABEL: func.func @forward
// STACK: arith.cmpi ule, %{{.*}}, %c512 : index
// STACK: arith.cmpi uge, %{{.*}}, %c49 : index
// Three layers, three instructions for each of TF32's: 48 for the first
// layer's product, 96 for each later one's (its own and its link's).
// STACK: gpu.launch
// STACK-COUNT-240: lstm.warp_mma
// STACK: gpu.launch
// STACK-NOT: lstm.warp_mma
// STACK: gpu.shuffle xor

// LAYERS-LABEL: func.func @forward
// LAYERS-NOT: %c16 : index
// LAYERS-COUNT-4: arith.cmpi ule, %{{.*}}, %c48{{.*}} : index
// LAYERS: scf.if
// LAYERS: arith.cmpi uge, %{{.*}}, %c9 : index
// LAYERS: threads({{.*}}) in (%{{.*}} = %c512, {{.*}} module(@lstm_persistent_forward_0) function(@lstm_persistent_forward_0)
// LAYERS: lstm.warp_mma
// LAYERS: } else {
// LAYERS: threads({{.*}}) in (%{{.*}} = %c256, {{.*}} module(@lstm_persistent_forward_0_dots) function(@lstm_persistent_forward_0_dots)
// LAYERS-NOT: lstm.warp_mma
// LAYERS: gpu.terminator
// LAYERS: arith.cmpi uge, %{{.*}}, %c9{{.*}} : index
// LAYERS: module(@lstm_persistent_forward_1) function(@lstm_persistent_forward_1)
// LAYERS: module(@lstm_persistent_forward_1_dots) function(@lstm_persistent_forward_1_dots)
// LAYERS: module(@lstm_persistent_forward_2) function(@lstm_persistent_forward_2)
// LAYERS: module(@lstm_persistent_forward_2_dots) function(@lstm_persistent_forward_2_dots)
// LAYERS: module(@lstm_persistent_forward_3) function(@lstm_persistent_forward_3)
// LAYERS: module(@lstm_persistent_forward_3_dots) function(@lstm_persistent_forward_3_dots)
// LAYERS-NOT: lstm.warp_mma
// LAYERS: gpu.terminator
// The wavefront above the kernels' bound.
// LAYERS: } else {
// LAYERS: scf.for

// REPORT-TF32: wavefront of 4 layers (forward): {{.*}} run where B>16, the layers above where B<=16)
// REPORT-BF16: wavefront of 4 layers (forward): {{.*}} run where B>16, the layers above where B<=16)
// LAYERS-BF16-LABEL: func.func @forward
// LAYERS-BF16: %[[BOUND:.*]] = arith.cmpi ule, %{{.*}}, %c16 : index
// LAYERS-BF16: arith.andi %[[BOUND]],

// REPORT-COUNT-4: persistent=B<=128 tensor-cores=B>=9 (3xtf32)
// REPORT-NOT: stack=
// REPORT: wavefront of 4 layers (forward): {{.*}} persistent=no (a wavefront of layers, run where B>48, the layers above where B<=48)

// BAD: split-tf32 splits TF32 operands; bf16-operands asks for bf16 ones
