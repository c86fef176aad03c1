// lstm-accumulate-into-products: a product that a pointwise op adds last
// accumulates into the rest of the sum, computed first; anything else is
// left as it was.
// RUN: lstm-opt %s -split-input-file -lstm-accumulate-into-products | FileCheck %s

#pw = affine_map<(d0, d1) -> (d0, d1)>
#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>

// Cho's GRU's backward step: dh_prev = dh * z + g * r + P. The rest of the
// sum is computed where the sum was, the product accumulates into it and
// takes its place; the zero fill goes.
// CHECK-LABEL: func.func @gru_step_end
// CHECK-SAME: (%[[DH:[^:]*]]: tensor<?x8xf32>, %[[Z:[^:]*]]: tensor<?x8xf32>, %[[G:[^:]*]]: tensor<?x8xf32>, %[[R:[^:]*]]: tensor<?x8xf32>, %[[D:[^:]*]]: tensor<?x16xf32>, %[[W:[^:]*]]: tensor<8x16xf32>)
// CHECK-NOT: linalg.fill
// CHECK: %[[REST:.*]] = linalg.generic {{.*}} ins(%[[DH]], %[[Z]], %[[G]], %[[R]] : {{.*}}) outs(%{{.*}} : tensor<?x8xf32>)
// CHECK: ^bb0(%[[A:[^:]*]]: f32, %[[B:[^:]*]]: f32, %[[C:[^:]*]]: f32, %[[E:[^:]*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[M1:.*]] = arith.mulf %[[A]], %[[B]]
// CHECK-NEXT: %[[M2:.*]] = arith.mulf %[[C]], %[[E]]
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[M1]], %[[M2]]
// CHECK-NEXT: linalg.yield %[[S]]
// CHECK: %[[P:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]{{.*}} ins(%[[D]], %[[W]] : {{.*}}) outs(%[[REST]] : tensor<?x8xf32>)
// CHECK-NOT: linalg.generic
// CHECK: return %[[P]]
func.func @gru_step_end(%dh: tensor<?x8xf32>, %z: tensor<?x8xf32>, %g: tensor<?x8xf32>,
                        %r: tensor<?x8xf32>, %d: tensor<?x16xf32>, %w: tensor<8x16xf32>) -> tensor<?x8xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %n = tensor.dim %dh, %c0 : tensor<?x8xf32>
  %e0 = tensor.empty(%n) : tensor<?x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e0 : tensor<?x8xf32>) -> tensor<?x8xf32>
  %p = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%d, %w : tensor<?x16xf32>, tensor<8x16xf32>) outs(%acc : tensor<?x8xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<?x8xf32>
  %e1 = tensor.empty(%n) : tensor<?x8xf32>
  %sum = linalg.generic {indexing_maps = [#pw, #pw, #pw, #pw, #pw, #pw], iterator_types = ["parallel", "parallel"]}
      ins(%dh, %z, %g, %r, %p : tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>)
      outs(%e1 : tensor<?x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32, %e: f32, %q: f32, %o: f32):
    %m1 = arith.mulf %a, %b : f32
    %m2 = arith.mulf %c, %e : f32
    %s1 = arith.addf %m1, %m2 : f32
    %s2 = arith.addf %s1, %q : f32
    linalg.yield %s2 : f32
  } -> tensor<?x8xf32>
  return %sum : tensor<?x8xf32>
}

// -----

#pw = affine_map<(d0, d1) -> (d0, d1)>

// The product on the left of the sum, a batched matmul, and the rest
// reading an operand defined after the product: the product moves below
// the rest.
// CHECK-LABEL: func.func @left_and_later
// CHECK: %[[T:.*]] = math.tanh
// CHECK: %[[REST:.*]] = linalg.generic {{.*}} ins(%[[T]] : tensor<2x?x8xf32>)
// CHECK: math.exp
// CHECK: %[[P:.*]] = linalg.batch_matmul ins(%{{.*}}, %{{.*}} : tensor<2x?x16xf32>, tensor<2x16x8xf32>) outs(%[[REST]] : tensor<2x?x8xf32>)
// CHECK: return %[[P]]
func.func @left_and_later(%d: tensor<2x?x16xf32>, %w: tensor<2x16x8xf32>, %x: tensor<2x?x8xf32>) -> tensor<2x?x8xf32> {
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %n = tensor.dim %d, %c1 : tensor<2x?x16xf32>
  %e0 = tensor.empty(%n) : tensor<2x?x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e0 : tensor<2x?x8xf32>) -> tensor<2x?x8xf32>
  %p = linalg.batch_matmul ins(%d, %w : tensor<2x?x16xf32>, tensor<2x16x8xf32>) outs(%acc : tensor<2x?x8xf32>) -> tensor<2x?x8xf32>
  %t = math.tanh %x : tensor<2x?x8xf32>
  %e1 = tensor.empty(%n) : tensor<2x?x8xf32>
  %sum = linalg.generic {indexing_maps = [affine_map<(l, b, h) -> (l, b, h)>, affine_map<(l, b, h) -> (l, b, h)>, affine_map<(l, b, h) -> (l, b, h)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%p, %t : tensor<2x?x8xf32>, tensor<2x?x8xf32>) outs(%e1 : tensor<2x?x8xf32>) {
  ^bb0(%q: f32, %a: f32, %o: f32):
    %ex = math.exp %a : f32
    %s = arith.addf %q, %ex : f32
    linalg.yield %s : f32
  } -> tensor<2x?x8xf32>
  return %sum : tensor<2x?x8xf32>
}

// -----

#pw = affine_map<(d0, d1) -> (d0, d1)>
#tr = affine_map<(d0, d1) -> (d1, d0)>
#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>

// Left alone: the product inside a longer sum (reassociating would round
// differently), read twice, read by another op too, into an accumulator
// that is not zeros, read transposed, a sum of two plain operands, and a
// sum that is not the root.
// CHECK-LABEL: func.func @left_alone
// CHECK-COUNT-7: linalg.fill
// CHECK-NOT: linalg.fill
func.func @left_alone(%d: tensor<8x16xf32>, %w: tensor<16x8xf32>, %x: tensor<8x8xf32>, %y: tensor<8x8xf32>)
    -> (tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<8x8xf32>
  // (P + x) + y: P inside.
  %z1 = linalg.fill ins(%zero : f32) outs(%e : tensor<8x8xf32>) -> tensor<8x8xf32>
  %p1 = linalg.matmul ins(%d, %w : tensor<8x16xf32>, tensor<16x8xf32>) outs(%z1 : tensor<8x8xf32>) -> tensor<8x8xf32>
  %s1 = linalg.generic {indexing_maps = [#pw, #pw, #pw, #pw], iterator_types = ["parallel", "parallel"]}
      ins(%p1, %x, %y : tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) outs(%e : tensor<8x8xf32>) {
  ^bb0(%q: f32, %a: f32, %b: f32, %o: f32):
    %t = math.exp %a : f32
    %u = arith.addf %q, %t : f32
    %v = arith.addf %u, %b : f32
    linalg.yield %v : f32
  } -> tensor<8x8xf32>
  // P * P + x: P read twice.
  %z2 = linalg.fill ins(%zero : f32) outs(%e : tensor<8x8xf32>) -> tensor<8x8xf32>
  %p2 = linalg.matmul ins(%d, %w : tensor<8x16xf32>, tensor<16x8xf32>) outs(%z2 : tensor<8x8xf32>) -> tensor<8x8xf32>
  %s2 = linalg.generic {indexing_maps = [#pw, #pw, #pw], iterator_types = ["parallel", "parallel"]}
      ins(%p2, %x : tensor<8x8xf32>, tensor<8x8xf32>) outs(%e : tensor<8x8xf32>) {
  ^bb0(%q: f32, %a: f32, %o: f32):
    %t = math.exp %a : f32
    %m = arith.mulf %q, %t : f32
    %v = arith.addf %m, %q : f32
    linalg.yield %v : f32
  } -> tensor<8x8xf32>
  // P also returned.
  %z3 = linalg.fill ins(%zero : f32) outs(%e : tensor<8x8xf32>) -> tensor<8x8xf32>
  %p3 = linalg.matmul ins(%d, %w : tensor<8x16xf32>, tensor<16x8xf32>) outs(%z3 : tensor<8x8xf32>) -> tensor<8x8xf32>
  %s3 = linalg.generic {indexing_maps = [#pw, #pw, #pw], iterator_types = ["parallel", "parallel"]}
      ins(%p3, %x : tensor<8x8xf32>, tensor<8x8xf32>) outs(%e : tensor<8x8xf32>) {
  ^bb0(%q: f32, %a: f32, %o: f32):
    %t = math.exp %a : f32
    %v = arith.addf %t, %q : f32
    linalg.yield %v : f32
  } -> tensor<8x8xf32>
  // An accumulator of ones.
  %o4 = linalg.fill ins(%one : f32) outs(%e : tensor<8x8xf32>) -> tensor<8x8xf32>
  %p4 = linalg.matmul ins(%d, %w : tensor<8x16xf32>, tensor<16x8xf32>) outs(%o4 : tensor<8x8xf32>) -> tensor<8x8xf32>
  %s4 = linalg.generic {indexing_maps = [#pw, #pw, #pw], iterator_types = ["parallel", "parallel"]}
      ins(%p4, %x : tensor<8x8xf32>, tensor<8x8xf32>) outs(%e : tensor<8x8xf32>) {
  ^bb0(%q: f32, %a: f32, %o: f32):
    %t = math.exp %a : f32
    %v = arith.addf %t, %q : f32
    linalg.yield %v : f32
  } -> tensor<8x8xf32>
  // P read transposed.
  %z5 = linalg.fill ins(%zero : f32) outs(%e : tensor<8x8xf32>) -> tensor<8x8xf32>
  %p5 = linalg.matmul ins(%d, %w : tensor<8x16xf32>, tensor<16x8xf32>) outs(%z5 : tensor<8x8xf32>) -> tensor<8x8xf32>
  %s5 = linalg.generic {indexing_maps = [#tr, #pw, #pw], iterator_types = ["parallel", "parallel"]}
      ins(%p5, %x : tensor<8x8xf32>, tensor<8x8xf32>) outs(%e : tensor<8x8xf32>) {
  ^bb0(%q: f32, %a: f32, %o: f32):
    %t = math.exp %a : f32
    %v = arith.addf %t, %q : f32
    linalg.yield %v : f32
  } -> tensor<8x8xf32>
  // P + x, x an operand as it comes.
  %z6 = linalg.fill ins(%zero : f32) outs(%e : tensor<8x8xf32>) -> tensor<8x8xf32>
  %p6 = linalg.matmul ins(%d, %w : tensor<8x16xf32>, tensor<16x8xf32>) outs(%z6 : tensor<8x8xf32>) -> tensor<8x8xf32>
  %s6 = linalg.generic {indexing_maps = [#pw, #pw, #pw], iterator_types = ["parallel", "parallel"]}
      ins(%p6, %x : tensor<8x8xf32>, tensor<8x8xf32>) outs(%e : tensor<8x8xf32>) {
  ^bb0(%q: f32, %a: f32, %o: f32):
    %v = arith.addf %q, %a : f32
    linalg.yield %v : f32
  } -> tensor<8x8xf32>
  // exp(P + x): the sum is not the root.
  %z7 = linalg.fill ins(%zero : f32) outs(%e : tensor<8x8xf32>) -> tensor<8x8xf32>
  %p7 = linalg.matmul ins(%d, %w : tensor<8x16xf32>, tensor<16x8xf32>) outs(%z7 : tensor<8x8xf32>) -> tensor<8x8xf32>
  %s7 = linalg.generic {indexing_maps = [#pw, #pw, #pw], iterator_types = ["parallel", "parallel"]}
      ins(%p7, %x : tensor<8x8xf32>, tensor<8x8xf32>) outs(%e : tensor<8x8xf32>) {
  ^bb0(%q: f32, %a: f32, %o: f32):
    %t = math.exp %a : f32
    %u = arith.addf %t, %q : f32
    %v = math.exp %u : f32
    linalg.yield %v : f32
  } -> tensor<8x8xf32>
  return %s1, %s2, %p3, %s3, %s4, %s5, %s6, %s7 : tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>
}
