// RUN: lstm-opt %s --lstm-dispatch-parallel-bodies -split-input-file -verify-diagnostics | FileCheck %s

// A call of a parallel body (lo, hi, work, then a buffer's descriptor
// fields and a scalar) inside a loop: the other arguments go into a stack
// slot made once in the caller's entry block, and the runtime's
// parallel-for calls @body_task, which reads them back and calls the body
// on its part of the range.
// CHECK-LABEL: llvm.func @caller
// CHECK-SAME: (%[[P:.*]]: !llvm.ptr, %[[N:.*]]: i64, %[[F:.*]]: f32)
// CHECK: %[[ONE:.*]] = llvm.mlir.constant(1 : i64) : i64
// CHECK: %[[SLOT:.*]] = llvm.alloca %[[ONE]] x !llvm.struct<(i64, ptr, i64, f32)> : (i64) -> !llvm.ptr
// CHECK: ^[[LOOP:.*]]:
// CHECK: %[[F0:.*]] = llvm.getelementptr %[[SLOT]][0, 0] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(i64, ptr, i64, f32)>
// CHECK: llvm.store %[[WORK:.*]], %[[F0]] : i64, !llvm.ptr
// CHECK: %[[F1:.*]] = llvm.getelementptr %[[SLOT]][0, 1]
// CHECK: llvm.store %[[P]], %[[F1]] : !llvm.ptr, !llvm.ptr
// CHECK: %[[F2:.*]] = llvm.getelementptr %[[SLOT]][0, 2]
// CHECK: llvm.store %[[N]], %[[F2]] : i64, !llvm.ptr
// CHECK: %[[F3:.*]] = llvm.getelementptr %[[SLOT]][0, 3]
// CHECK: llvm.store %[[F]], %[[F3]] : f32, !llvm.ptr
// CHECK: %[[TASK:.*]] = llvm.mlir.addressof @body_task : !llvm.ptr
// CHECK: llvm.call @lstmRuntimeCpuParallelFor(%[[TASK]], %[[SLOT]], %[[LO:.*]], %[[N]], %[[WORK]]) : (!llvm.ptr, !llvm.ptr, i64, i64, i64) -> ()
// CHECK-NOT: llvm.call @body(
// CHECK: llvm.func @body(
// CHECK-NOT: lstm.parallel_body
// CHECK: llvm.func internal @body_task(%[[CTX:.*]]: !llvm.ptr, %[[FROM:.*]]: i64, %[[TO:.*]]: i64)
// CHECK: %[[G0:.*]] = llvm.getelementptr %[[CTX]][0, 0]
// CHECK: %[[W:.*]] = llvm.load %[[G0]] : !llvm.ptr -> i64
// CHECK: %[[G1:.*]] = llvm.getelementptr %[[CTX]][0, 1]
// CHECK: %[[BUF:.*]] = llvm.load %[[G1]] : !llvm.ptr -> !llvm.ptr
// CHECK: %[[G2:.*]] = llvm.getelementptr %[[CTX]][0, 2]
// CHECK: %[[SIZE:.*]] = llvm.load %[[G2]] : !llvm.ptr -> i64
// CHECK: %[[G3:.*]] = llvm.getelementptr %[[CTX]][0, 3]
// CHECK: %[[S:.*]] = llvm.load %[[G3]] : !llvm.ptr -> f32
// CHECK: llvm.call @body(%[[FROM]], %[[TO]], %[[W]], %[[BUF]], %[[SIZE]], %[[S]])
// CHECK: llvm.func @lstmRuntimeCpuParallelFor(!llvm.ptr, !llvm.ptr, i64, i64, i64)
llvm.func @caller(%p: !llvm.ptr, %n: i64, %f: f32) {
  %c0 = llvm.mlir.constant(0 : i64) : i64
  %c1 = llvm.mlir.constant(1 : i64) : i64
  %work = llvm.mlir.constant(384 : i64) : i64
  llvm.br ^loop(%c0 : i64)
^loop(%t: i64):
  %done = llvm.icmp "sge" %t, %n : i64
  llvm.cond_br %done, ^exit, ^step
^step:
  llvm.call @body(%c0, %n, %work, %p, %n, %f) : (i64, i64, i64, !llvm.ptr, i64, f32) -> ()
  %next = llvm.add %t, %c1 : i64
  llvm.br ^loop(%next : i64)
^exit:
  llvm.return
}
llvm.func @body(%lo: i64, %hi: i64, %work: i64, %p: !llvm.ptr, %n: i64, %f: f32) attributes {lstm.parallel_body} {
  llvm.return
}

// -----

// A body whose range is not integers: an error, not a wrong call.
// expected-error @+1 {{a parallel body takes (lo, hi, work, ...) integers and returns nothing}}
llvm.func @bad_body(%lo: f32, %hi: i64, %work: i64) attributes {lstm.parallel_body} {
  llvm.return
}
