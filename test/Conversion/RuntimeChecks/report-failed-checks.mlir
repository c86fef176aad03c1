// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// RUN: lstm-opt %s --lstm-report-failed-checks | FileCheck %s
// RUN: lstm-opt %s --lstm-report-failed-checks=cpu-runtime=true | FileCheck %s --check-prefix=CPU

// The host code's cf.assert becomes a branch to a block that writes the
// message and a newline to file descriptor 2 and aborts (upstream's lowering
// prints it on stdout with puts); the same message twice shares a global;
// a kernel's assertion is left to the GPU lowering.
// CHECK-DAG: llvm.mlir.global private constant @[[MSG:lstm_check_failed_msg_[0-9]+]]("operand #1 has a different batch size\0A")
// CHECK-DAG: llvm.func @write(i32, !llvm.ptr, i64) -> i64
// CHECK-DAG: llvm.func @abort()
// CHECK-LABEL: func.func @checks
// CHECK-SAME: (%[[A:.*]]: i1, %[[B:.*]]: i1)
// CHECK: cf.cond_br %[[A]], ^[[OK1:.*]], ^[[FAIL1:[a-z0-9]*]]
// CHECK: ^[[FAIL1]]:
// CHECK: %[[P1:.*]] = llvm.mlir.addressof @[[MSG]]
// CHECK: %[[FD:.*]] = llvm.mlir.constant(2 : i32)
// CHECK: %[[LEN:.*]] = llvm.mlir.constant(38 : i64)
// CHECK: llvm.call @write(%[[FD]], %{{.*}}, %[[LEN]])
// CHECK-NEXT: llvm.call @abort()
// CHECK-NEXT: llvm.unreachable
// CHECK: ^[[OK1]]:
// CHECK: cf.cond_br %[[B]], ^[[OK2:.*]], ^[[FAIL2:[a-z0-9]*]]
// CHECK: ^[[FAIL2]]:
// CHECK-NEXT: llvm.mlir.addressof @[[MSG]]
// CHECK: ^[[OK2]]:
// CHECK-NEXT: return
// CHECK-NOT: cf.assert
// CHECK: gpu.module @kernels
// CHECK: cf.assert
func.func @checks(%a: i1, %b: i1) {
  cf.assert %a, "operand #1 has a different batch size"
  cf.assert %b, "operand #1 has a different batch size"
  return
}

module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @kernel(%c: i1) kernel {
      cf.assert %c, "in a kernel"
      gpu.return
    }
  }
}

// With cpu-runtime (lstm-to-cpu's) the message, a C string, goes to the CPU
// runtime's lstmRuntimeCpuCheckFailed, which returns a guarded call to its
// caller; nothing of libc's is declared.
// CPU-DAG: llvm.mlir.global private constant @[[MSG:lstm_check_failed_msg_[0-9]+]]("operand #1 has a different batch size\00")
// CPU-DAG: llvm.func @lstmRuntimeCpuCheckFailed(!llvm.ptr)
// CPU-NOT: llvm.func @write
// CPU-LABEL: func.func @checks
// CPU: cf.cond_br
// CPU: %[[P:.*]] = llvm.mlir.addressof @[[MSG]]
// CPU: llvm.call @lstmRuntimeCpuCheckFailed(%{{.*}}) : (!llvm.ptr) -> ()
// CPU-NEXT: llvm.unreachable
// CPU-NOT: llvm.call @abort
