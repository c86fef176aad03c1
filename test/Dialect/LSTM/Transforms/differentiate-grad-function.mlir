// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// RUN: lstm-opt %s --lstm-differentiate | FileCheck %s
// RUN: lstm-opt %s --lstm-differentiate=grad-function=false | FileCheck %s --check-prefix=TRAIN
// RUN: lstm-opt %s "--lstm-differentiate=grad-function=false forward-through-train=true" | FileCheck %s --check-prefix=THROUGH

// With forward-through-train, @f is a call of @f_train returning its first
// results (the saved activations dropped): no layer of its own.
// THROUGH-LABEL: func.func @f(
// THROUGH-SAME: %[[X:[^:]*]]: tensor<?x?x3xf32>, %[[H0:[^:]*]]: tensor<?x4xf32>, %[[W:[^:]*]]: tensor<4x3xf32>, %[[R:[^:]*]]: tensor<4x4xf32>)
// THROUGH-NEXT: %[[T:.*]]:2 = call @f_train(%[[X]], %[[H0]], %[[W]], %[[R]])
// THROUGH-NEXT: return %[[T]]#0, %[[T]]#1 : tensor<?x?x4xf32>, tensor<?x4xf32>
// THROUGH-NEXT: }
// THROUGH: func.func @f_train(
// THROUGH: lstm.layer forward

// By default the three gradient functions; with grad-function=false only
// the training forward and the backward (@f_grad, which they are cut from,
// is dropped), their signatures unchanged.
// CHECK-DAG: func.func @f_grad(
// CHECK-DAG: func.func @f_train(%{{.*}}: tensor<?x?x3xf32>, %{{.*}}: tensor<?x4xf32>, %{{.*}}: tensor<4x3xf32>, %{{.*}}: tensor<4x4xf32>) -> (tensor<?x?x4xf32>, tensor<?x4xf32>)
// CHECK-DAG: func.func @f_backward(
// TRAIN-NOT: @f_grad
// TRAIN-DAG: func.func @f_train(%{{.*}}: tensor<?x?x3xf32>, %{{.*}}: tensor<?x4xf32>, %{{.*}}: tensor<4x3xf32>, %{{.*}}: tensor<4x4xf32>) -> (tensor<?x?x4xf32>, tensor<?x4xf32>)
// TRAIN-DAG: func.func @f_backward(
// TRAIN-NOT: @f_grad
func.func @f(%x: tensor<?x?x3xf32>, %h0: tensor<?x4xf32>, %W: tensor<4x3xf32>,
             %R: tensor<4x4xf32>) -> (tensor<?x?x4xf32>, tensor<?x4xf32>) {
  %y, %hT = lstm.layer forward ins(%x : tensor<?x?x3xf32>) init(%h0 : tensor<?x4xf32>)
      -> (tensor<?x?x4xf32>), (tensor<?x4xf32>) {
  ^bb0(%xt: tensor<?x3xf32>, %h: tensor<?x4xf32>):
    %g = lstm.gate tanh(%xt, %h : tensor<?x3xf32>, tensor<?x4xf32>)
        weights(%W, %R : tensor<4x3xf32>, tensor<4x4xf32>) -> tensor<?x4xf32>
    lstm.yield out(%g : tensor<?x4xf32>) state(%g : tensor<?x4xf32>)
  }
  return %y, %hT : tensor<?x?x4xf32>, tensor<?x4xf32>
}
