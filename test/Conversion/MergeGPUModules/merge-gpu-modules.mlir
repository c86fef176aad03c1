// RUN: lstm-opt %s --lstm-merge-gpu-modules --split-input-file --verify-diagnostics | FileCheck %s

// Outlined kernels, one module each, become one module; the launches point
// at the kernels' new place, and a name taken in the first module is made
// unique (the second @k becomes @k_0, and only its own launch and calls
// follow it).
// CHECK-LABEL: func.func @forward
// CHECK: gpu.launch_func @first::@first
// CHECK: gpu.launch_func @first::@second
// CHECK: gpu.launch_func @first::@k{{ }}
// CHECK: gpu.launch_func @first::@k_0
// CHECK: gpu.module @first {
// CHECK: gpu.func @first() kernel
// CHECK: gpu.func @k() kernel
// CHECK-NEXT: call @helper()
// CHECK: gpu.func @second() kernel
// CHECK: gpu.func @k_0() kernel
// CHECK-NEXT: call @helper_0()
// CHECK-NOT: gpu.module
module attributes {gpu.container_module} {
  func.func @forward() {
    %c1 = arith.constant 1 : index
    gpu.launch_func @first::@first blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
    gpu.launch_func @second::@second blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
    gpu.launch_func @first::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
    gpu.launch_func @third::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
    return
  }
  gpu.module @first {
    gpu.func @first() kernel {
      gpu.return
    }
    func.func @helper() {
      return
    }
    gpu.func @k() kernel {
      func.call @helper() : () -> ()
      gpu.return
    }
  }
  gpu.module @second {
    gpu.func @second() kernel {
      gpu.return
    }
  }
  gpu.module @third {
    func.func @helper() {
      return
    }
    gpu.func @k() kernel {
      func.call @helper() : () -> ()
      gpu.return
    }
  }
}

// -----

// After targets are attached it is too late.
module attributes {gpu.container_module} {
  // expected-error @+1 {{lstm-merge-gpu-modules: runs before targets are attached (this module has one)}}
  gpu.module @a [#nvvm.target] {
  }
  gpu.module @b [#nvvm.target] {
  }
}
