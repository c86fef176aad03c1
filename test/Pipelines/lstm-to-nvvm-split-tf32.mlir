// compute-type=fp32 (the default) runs lstm-split-tf32-gemms: a sequence's
// products (here the four layers' hoisted input projections, [T·B, 512] x
// [512, 2048]) are split behind a run-time check of their rows (at least
// 128, and 683 for 512 multiply-adds an element of the operands); a step's
// products inside the time loops too, behind a check of their rows and
// work (B·2048·512 multiply-adds, at least min-loop-work from B = 128),
// with each layer's recurrent weights split before the loops behind the
// same check of the batch, built from the function's arguments. Appleyard's
// four layers of H = 512, each a layer of its own (no wavefront).
// RUN: lstm-opt %S/../Conversion/LSTMToPersistent/Inputs/stack4-h512.mlir --lstm-optimize=wavefront=false | lstm-opt --lstm-to-nvvm -mlir-print-ir-after=lstm-split-tf32-gemms -o /dev/null 2>&1 | FileCheck %s
// The backward of one layer of H = 640 (4H = 2560 gate rows), I = 1024: its
// products deeper than max-depth run in parts whose products are added in
// fp32. The weight gradients dR (2560 x 640) and dW (2560 x 1024), summed over
// T·B rows known at run time, behind the check that T·B reaches 128, in
// ceil(T·B / 1024) parts; the product through the input weights, dX = dG·W
// (depth 2560), in three parts of 854, 854 and 852.
// RUN: lstm-opt %S/Inputs/layer-h640.mlir --lstm-combine-gate-gemms --lstm-differentiate=grad-function=false --lstm-optimize | lstm-opt --lstm-to-nvvm -mlir-print-ir-after=lstm-split-tf32-gemms -o /dev/null 2>&1 | FileCheck %s --check-prefix=PARTS
// split-tf32-gemms=false, and the tf32 and bf16 compute types, leave the pass out.
// RUN: lstm-opt --lstm-to-nvvm --dump-pass-pipeline -o /dev/null < /dev/null 2>&1 | FileCheck %s --check-prefix=PIPELINE
// RUN: lstm-opt --lstm-to-nvvm=split-tf32-gemms=false --dump-pass-pipeline -o /dev/null < /dev/null 2>&1 | FileCheck %s --check-prefix=OFF
// RUN: lstm-opt --lstm-to-nvvm=compute-type=tf32 --dump-pass-pipeline -o /dev/null < /dev/null 2>&1 | FileCheck %s --check-prefix=OFF
// RUN: lstm-opt --lstm-to-nvvm=compute-type=bf16 --dump-pass-pipeline -o /dev/null < /dev/null 2>&1 | FileCheck %s --check-prefix=OFF

// PIPELINE: lstm-split-tf32-gemms{in-loops=true max-depth=1024 min-intensity=512 min-loop-work=134217728 min-part-outputs=1048576 min-rows=128}
// OFF-NOT: lstm-split-tf32-gemms

// CHECK-LABEL: IR Dump After SplitTF32GemmsPass
// CHECK: func.func @forward
// CHECK-COUNT-4: = scf.if %{{.*}} -> (tensor<2048x1536xf32>)
// CHECK: %[[ROWS0:.*]] = arith.cmpi sge, %{{.*}}, %c128{{.*}} : index
// CHECK: %[[INTENSE0:.*]] = arith.cmpi uge, %{{.*}}, %{{.*}} : index
// CHECK-NEXT: %[[ENOUGH0:.*]] = arith.andi %[[ROWS0]], %[[INTENSE0]] : i1
// CHECK-NEXT: scf.if %[[ENOUGH0]]
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<?x1536xf32>, tensor<2048x1536xf32>) {{.*}} attrs = {lstm.tf32_operands}
// CHECK: scf.for
// CHECK: %[[STEPROWS:.*]] = arith.cmpi sge, %{{.*}}, %c128{{.*}} : index
// CHECK: %[[STEPWORK:.*]] = arith.cmpi sge, %{{.*}}, %c128{{.*}} : index
// CHECK-NEXT: %[[STEP0:.*]] = arith.andi %[[STEPROWS]], %[[STEPWORK]] : i1
// CHECK-NEXT: %[[SPLIT0:.*]] = arith.andi %[[STEP0]], %{{.*}} : i1
// CHECK-NEXT: scf.if %[[SPLIT0]] -> (tensor<?x2048xf32>)
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<?x1536xf32>, tensor<2048x1536xf32>) {{.*}} attrs = {lstm.tf32_operands}
// CHECK-COUNT-3: scf.for
// CHECK: return

// PARTS-LABEL: func.func @forward_backward
// The backward's step product dh = dG·R (depth 2560, three parts) is split
// where the batch gives it 2^27 multiply-adds (B >= 82) and, in parts that
// run one after another, 2^20 outputs (B·640, B >= 1639): R's three parts
// are split before the loop behind that test of the batch, read from the
// loop's initial states (the loop carries the batch in two states that
// trade their rows each step, which ValueBounds does not follow), and the
// step's product reads them where its own rows pass the same test and the
// test before the loop passed.
// PARTS: %[[WORK_DH:.*]] = arith.cmpi sge, %{{.*}}, %c82 : index
// PARTS: %[[OUTPUTS_DH:.*]] = arith.cmpi sge, %{{.*}}, %c1639 : index
// PARTS: %[[START_DH:.*]] = arith.andi %{{.*}}, %[[OUTPUTS_DH]] : i1
// PARTS-COUNT-3: = scf.if %[[START_DH]] -> (tensor<640x{{.*}}xf32>)
// PARTS: scf.for
// PARTS: %[[STEP_DH:.*]] = arith.cmpi sge, %{{.*}}, %c1639{{.*}} : index
// PARTS: %[[STEPOK_DH:.*]] = arith.andi %{{.*}}, %[[STEP_DH]] : i1
// PARTS: %[[BOTH_DH:.*]] = arith.andi %[[STEPOK_DH]], %[[START_DH]] : i1
// PARTS: scf.if %[[BOTH_DH]]
// PARTS-COUNT-3: attrs = {lstm.tf32_operands}
// PARTS: %[[DEEP_R:.*]] = arith.cmpi sge, %{{.*}}, %c128{{.*}} : index
// PARTS-NEXT: scf.if %[[DEEP_R]] -> (tensor<2560x640xf32>)
// PARTS: %[[CEIL_R:.*]] = arith.ceildivui %[[ROWS_R:.*]], %c1024{{.*}} : index
// PARTS: %[[PART_R:.*]] = arith.ceildivui %[[ROWS_R]], %{{.*}} : index
// PARTS: %[[FIRST_R:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<2560x640xf32>) attrs = {lstm.tf32_operands}
// PARTS: scf.for %{{.*}} = %[[PART_R]] to %[[ROWS_R]] step %[[PART_R]] iter_args(%[[ACC_R:.*]] = %[[FIRST_R]]) -> (tensor<2560x640xf32>)
// PARTS: linalg.generic {{.*}} outs(%[[ACC_R]] : tensor<2560x640xf32>) attrs = {lstm.tf32_operands}
// PARTS: %[[X0:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<?x2562xf32>, tensor<2562x1024xf32>) {{.*}} attrs = {lstm.tf32_operands}
// PARTS: %[[X1:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<?x2562xf32>, tensor<2562x1024xf32>) outs(%[[X0]] : tensor<?x1024xf32>) attrs = {lstm.tf32_operands}
// PARTS: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<?x2556xf32>, tensor<2556x1024xf32>) outs(%[[X1]] : tensor<?x1024xf32>) attrs = {lstm.tf32_operands}
// PARTS: %[[DEEP_W:.*]] = arith.cmpi sge, %{{.*}}, %c128{{.*}} : index
// PARTS-NEXT: scf.if %[[DEEP_W]] -> (tensor<2560x1024xf32>)
// PARTS: arith.ceildivui %{{.*}}, %c1024{{.*}} : index
// PARTS: %[[FIRST_W:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<2560x1024xf32>) attrs = {lstm.tf32_operands}
// PARTS: scf.for {{.*}} iter_args(%[[ACC_W:.*]] = %[[FIRST_W]]) -> (tensor<2560x1024xf32>)
// PARTS: linalg.generic {{.*}} outs(%[[ACC_W]] : tensor<2560x1024xf32>) attrs = {lstm.tf32_operands}
// PARTS: return
