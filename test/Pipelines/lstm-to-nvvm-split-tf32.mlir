// compute-type=fp32 (the default) runs lstm-split-tf32-gemms with
// in-loops=false: a sequence's products (here the four layers' hoisted input
// projections, [T·B, 512] x [512, 2048]) are split behind a run-time check
// of their rows, a step's products inside the time loops are not. Appleyard's
// four layers of H = 512, each a layer of its own (no wavefront).
// RUN: lstm-opt %S/../Conversion/LSTMToPersistent/Inputs/stack4-h512.mlir --lstm-optimize=wavefront=false | lstm-opt --lstm-to-nvvm -mlir-print-ir-after=lstm-split-tf32-gemms -o /dev/null 2>&1 | FileCheck %s
// split-tf32-gemms=false, and the tf32 and bf16 compute types, leave the pass out.
// RUN: lstm-opt --lstm-to-nvvm --dump-pass-pipeline -o /dev/null < /dev/null 2>&1 | FileCheck %s --check-prefix=PIPELINE
// RUN: lstm-opt --lstm-to-nvvm=split-tf32-gemms=false --dump-pass-pipeline -o /dev/null < /dev/null 2>&1 | FileCheck %s --check-prefix=OFF
// RUN: lstm-opt --lstm-to-nvvm=compute-type=tf32 --dump-pass-pipeline -o /dev/null < /dev/null 2>&1 | FileCheck %s --check-prefix=OFF
// RUN: lstm-opt --lstm-to-nvvm=compute-type=bf16 --dump-pass-pipeline -o /dev/null < /dev/null 2>&1 | FileCheck %s --check-prefix=OFF

// PIPELINE: lstm-split-tf32-gemms{in-loops=false max-depth=2048 min-rows=128}
// OFF-NOT: lstm-split-tf32-gemms

// CHECK-LABEL: IR Dump After SplitTF32GemmsPass
// CHECK: func.func @forward
// CHECK: %[[ENOUGH0:.*]] = arith.cmpi sge, %{{.*}}, %c128{{.*}} : index
// CHECK: scf.if %[[ENOUGH0]]
// CHECK: tensor.collapse_shape {{.*}} : tensor<2048x3x512xf32> into tensor<2048x1536xf32>
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<?x1536xf32>, tensor<2048x1536xf32>) {{.*}} attrs = {lstm.tf32_operands}
// CHECK: scf.for
// CHECK-NOT: lstm.tf32_operands
// CHECK: %[[ENOUGH1:.*]] = arith.cmpi sge, %{{.*}}, %c128{{.*}} : index
// CHECK: scf.if %[[ENOUGH1]]
// CHECK: attrs = {lstm.tf32_operands}
// CHECK: scf.for
// CHECK-NOT: lstm.tf32_operands
// CHECK: %[[ENOUGH2:.*]] = arith.cmpi sge, %{{.*}}, %c128{{.*}} : index
// CHECK: scf.if %[[ENOUGH2]]
// CHECK: attrs = {lstm.tf32_operands}
// CHECK: scf.for
// CHECK-NOT: lstm.tf32_operands
// CHECK: %[[ENOUGH3:.*]] = arith.cmpi sge, %{{.*}}, %c128{{.*}} : index
// CHECK: scf.if %[[ENOUGH3]]
// CHECK: attrs = {lstm.tf32_operands}
// CHECK: scf.for
// CHECK-NOT: lstm.tf32_operands
// CHECK: return
