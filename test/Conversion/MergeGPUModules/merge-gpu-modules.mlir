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
      %i = gpu.thread_id x
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

// A module with a target attached (the persistent kernels, lowered before
// the rest) is left as it is; the others merge.
// CHECK-LABEL: gpu.module @lowered [#nvvm.target]
// CHECK-NEXT: llvm.func @p()
// CHECK: gpu.module @a {
// CHECK-DAG: gpu.func @ka()
// CHECK-DAG: gpu.func @kb(
// CHECK-NOT: gpu.module @b
module attributes {gpu.container_module} {
  gpu.module @lowered [#nvvm.target] {
    llvm.func @p() attributes {nvvm.kernel} {
      llvm.return
    }
  }
  gpu.module @a {
    gpu.func @ka() kernel {
      gpu.return
    }
  }
  gpu.module @b {
    gpu.func @kb(%x: index) kernel {
      gpu.return
    }
  }
}

// -----

// A kernel identical to an earlier one (the training forward's step, say,
// outlined once for @f_grad and once for @f_train) is dropped; its launches
// use the earlier one. A kernel that differs in one constant stays.
// CHECK-LABEL: func.func @grad
// CHECK: gpu.launch_func @a::@step blocks
// CHECK: gpu.launch_func @a::@step blocks
// CHECK: gpu.launch_func @a::@other blocks
// CHECK: gpu.module @a {
// CHECK: gpu.func @step(%{{.*}}: memref<4xf32>) kernel
// CHECK: gpu.func @other(%{{.*}}: memref<4xf32>) kernel
// CHECK-NOT: gpu.func
module attributes {gpu.container_module} {
  func.func @grad(%m: memref<4xf32>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @a::@step blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%m : memref<4xf32>)
    gpu.launch_func @b::@step_copy blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%m : memref<4xf32>)
    gpu.launch_func @c::@other blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%m : memref<4xf32>)
    return
  }
  gpu.module @a {
    gpu.func @step(%m: memref<4xf32>) kernel {
      %i = gpu.thread_id x
      %v = memref.load %m[%i] : memref<4xf32>
      %two = arith.constant 2.0 : f32
      %w = arith.mulf %v, %two : f32
      memref.store %w, %m[%i] : memref<4xf32>
      gpu.return
    }
  }
  gpu.module @b {
    gpu.func @step_copy(%m: memref<4xf32>) kernel {
      %i = gpu.thread_id x
      %v = memref.load %m[%i] : memref<4xf32>
      %two = arith.constant 2.0 : f32
      %w = arith.mulf %v, %two : f32
      memref.store %w, %m[%i] : memref<4xf32>
      gpu.return
    }
  }
  gpu.module @c {
    gpu.func @other(%m: memref<4xf32>) kernel {
      %i = gpu.thread_id x
      %v = memref.load %m[%i] : memref<4xf32>
      %three = arith.constant 3.0 : f32
      %w = arith.mulf %v, %three : f32
      memref.store %w, %m[%i] : memref<4xf32>
      gpu.return
    }
  }
}
