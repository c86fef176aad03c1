// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// RUN: lstm-opt %s --lstm-check-allocations | FileCheck %s
// RUN: lstm-opt %s --lstm-check-allocations=cpu-runtime=true | FileCheck %s --check-prefix=CPU

// A null pointer from an allocation function branches to a block that
// reports the size and where the value was made, then stops: by default
// dprintf on stderr and abort; with cpu-runtime the CPU runtime's
// lstmRuntimeCpuOutOfMemory (which returns a guarded call to its caller).
// Other calls are left alone.
// CHECK-DAG: llvm.func @dprintf(i32, !llvm.ptr, ...) -> i32
// CHECK-DAG: llvm.mlir.global private constant @[[FMT:lstm_out_of_memory_msg_[0-9]+]]("lstm: out of memory: cannot allocate a buffer of %llu bytes (for the value made at {{.*}}check-allocations.mlir:{{[0-9]+}}:{{[0-9]+}})\0A\00")
// CHECK-DAG: llvm.mlir.global private constant @{{lstm_out_of_memory_msg_[0-9]+}}("lstm: out of memory: cannot allocate a buffer of %llu bytes (for the value made at layer 1 (reverse) of net at train.py:7)\0A\00")
// CHECK-DAG: llvm.mlir.global private constant @{{lstm_out_of_memory_msg_[0-9]+}}("lstm: out of memory: cannot allocate a buffer of %llu bytes (for the value made at cell.py:3:4)\0A\00")
// CHECK-LABEL: llvm.func @allocates
// CHECK: %[[P:.*]] = llvm.call @malloc(%[[N:.*]]) : (i64) -> !llvm.ptr
// CHECK: %[[NULL:.*]] = llvm.mlir.zero : !llvm.ptr
// CHECK: %[[IS_NULL:.*]] = llvm.icmp "eq" %[[P]], %[[NULL]]
// CHECK: llvm.cond_br %[[IS_NULL]], ^[[FAIL:.*]], ^[[OK:[a-z0-9]*]]
// CHECK: ^[[FAIL]]:
// CHECK: llvm.call @fflush(%[[NULL]])
// CHECK: llvm.call @dprintf(%{{.*}}, %{{.*}}, %[[N]]) vararg
// CHECK-NEXT: llvm.call @abort()
// CHECK-NEXT: llvm.unreachable
// CHECK: ^[[OK]]:
// CHECK-NEXT: llvm.call @free(%[[P]])
// CHECK-NOT: llvm.icmp
// CHECK: llvm.return
// CPU-DAG: llvm.func @lstmRuntimeCpuOutOfMemory(i64, !llvm.ptr)
// CPU-DAG: llvm.mlir.global private constant @[[AT:lstm_out_of_memory_at_[0-9]+]]("{{.*}}check-allocations.mlir:{{[0-9]+}}:{{[0-9]+}}\00")
// CPU-DAG: llvm.mlir.global private constant @{{lstm_out_of_memory_at_[0-9]+}}("layer 1 (reverse) of net at train.py:7\00")
// CPU-LABEL: llvm.func @allocates
// CPU: ^{{.*}}:
// CPU: %[[WHERE:.*]] = llvm.mlir.addressof @[[AT]]
// CPU: llvm.call @lstmRuntimeCpuOutOfMemory(%{{.*}}, %{{.*}}) : (i64, !llvm.ptr) -> ()
// CPU-NEXT: llvm.unreachable
// CPU-NOT: llvm.call @abort
llvm.func @malloc(i64) -> !llvm.ptr
llvm.func @free(!llvm.ptr)
llvm.func @allocates(%n: i64) {
  %p = llvm.call @malloc(%n) : (i64) -> !llvm.ptr
  llvm.call @free(%p) : (!llvm.ptr) -> ()
  llvm.return
}

// Where the op's location is a front end's name (lstmc names each layer and
// the caller's line), the message says that name; a file location inside a
// name is the file's line (the messages' CHECK-DAG lines are at the top).
llvm.func @named(%n: i64) {
  %p = llvm.call @malloc(%n) : (i64) -> !llvm.ptr loc("layer 1 (reverse) of net at train.py:7")
  %q = llvm.call @malloc(%n) : (i64) -> !llvm.ptr loc("tanh"("cell.py":3:4))
  llvm.call @free(%p) : (!llvm.ptr) -> ()
  llvm.call @free(%q) : (!llvm.ptr) -> ()
  llvm.return
}
