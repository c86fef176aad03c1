// RUN: lstm-opt %s --lstm-approximate-math -split-input-file | FileCheck %s
// RUN: lstm-opt %s --lstm-approximate-math=functions=tanh -split-input-file | FileCheck %s --check-prefix=TANH
// RUN: not lstm-opt %s --lstm-approximate-math=functions=sin 2>&1 | FileCheck %s --check-prefix=UNKNOWN

// f32 tanh, exp, expm1 and log1p (scalars in a loop body, or vectors)
// become arith; log stays (upstream's polynomial flushes denormals), f64
// functions stay math ops (libm), as do functions not asked for. The
// accuracy is checked by accuracy.test.
// (What they become uses math.absf and math.fma, which LLVM has.)
// CHECK-LABEL: func.func @f32
// CHECK-NOT: math.{{(tanh|exp|expm1|log1p)}}
// CHECK: math.log %{{.*}} : f32
// CHECK-NOT: math.{{(tanh|exp|expm1|log1p)}}
// CHECK: return
// TANH-LABEL: func.func @f32
// TANH-NOT: math.tanh
// TANH: math.exp
// TANH: math.expm1
// TANH: math.log
// TANH: math.log1p
func.func @f32(%x: f32, %v: vector<8xf32>) -> (f32, f32, f32, f32, f32, vector<8xf32>) {
  %t = math.tanh %x : f32
  %e = math.exp %x : f32
  %m = math.expm1 %x : f32
  %l = math.log %x : f32
  %p = math.log1p %x : f32
  %vt = math.tanh %v : vector<8xf32>
  return %t, %e, %m, %l, %p, %vt : f32, f32, f32, f32, f32, vector<8xf32>
}

// -----

// CHECK-LABEL: func.func @f64
// CHECK: math.tanh %{{.*}} : f64
// CHECK: math.exp %{{.*}} : f64
// CHECK: math.log %{{.*}} : f64
func.func @f64(%x: f64) -> (f64, f64, f64) {
  %t = math.tanh %x : f64
  %e = math.exp %x : f64
  %l = math.log %x : f64
  return %t, %e, %l : f64, f64, f64
}

// UNKNOWN: error: lstm-approximate-math: no approximation of 'sin' (functions: tanh, exp, expm1, log, log1p, log2)
