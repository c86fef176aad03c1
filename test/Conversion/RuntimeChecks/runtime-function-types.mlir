// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// RUN: not lstm-opt %s --lstm-report-failed-checks=cpu-runtime=true 2>&1 | FileCheck %s --check-prefix=CHECKS
// RUN: not lstm-opt %s --lstm-check-allocations=cpu-runtime=true 2>&1 | FileCheck %s --check-prefix=ALLOCATIONS

// A module that declares the CPU runtime's failure functions with other
// types is refused, naming the function, not called with the wrong
// arguments.
// CHECKS: error: redefinition of function 'lstmRuntimeCpuCheckFailed' of different type
// CHECKS: error: lstm-report-failed-checks: the module declares lstmRuntimeCpuCheckFailed with another type
// ALLOCATIONS: error: redefinition of function 'lstmRuntimeCpuOutOfMemory' of different type
// ALLOCATIONS: error: lstm-check-allocations: the module declares lstmRuntimeCpuOutOfMemory with another type
llvm.func @lstmRuntimeCpuCheckFailed(i32)
llvm.func @lstmRuntimeCpuOutOfMemory(i32)
llvm.func @malloc(i64) -> !llvm.ptr
func.func @f(%a: i1, %n: i64) {
  cf.assert %a, "a check"
  %p = llvm.call @malloc(%n) : (i64) -> !llvm.ptr
  return
}
