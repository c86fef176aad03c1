// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// RUN: lstm-opt %s --lstm-concat-summed-products -split-input-file | FileCheck %s
// RUN: lstm-opt %s --lstm-concat-summed-products=pad-columns=false -split-input-file | FileCheck %s --check-prefix=NOPAD
// RUN: lstm-opt %s --lstm-concat-summed-products=stack-batches=true -split-input-file | FileCheck %s --check-prefix=STACK
// RUN: lstm-opt %s --lstm-concat-summed-products="stack-batches=true pad-columns=false pad-stacks=true" -split-input-file | FileCheck %s --check-prefix=PADSTACK

#x = affine_map<(l, b, h, k) -> (l, b, k)>
#w = affine_map<(l, b, h, k) -> (l, h, k)>
#c = affine_map<(l, b, h, k) -> (l, b, h)>
#id = affine_map<(l, b, n) -> (l, b, n)>
#vec = affine_map<(l, b, n) -> (l, n)>

// A wavefront's forward diagonal at appleyard's sizes: the layers' inputs
// gathered from x_t and the links, times the input weights; the states
// times the recurrent weights; the fused cell adds the two products gate by
// gate (with a bias between the sums of the last gate). One product of
// depth 1024 instead: the gather is built in the left half of its operand,
// the states copied into the right half; the weights concatenated right
// after the later one is defined, before the loop. Each gate reads one
// slice; the additions of the products are gone, the bias's stays.
// CHECK-LABEL: func.func @diagonal
// CHECK-SAME: (%[[X:[^:]*]]: tensor<?x512xf32>, %[[LINKS:[^:]*]]: tensor<3x?x512xf32>, %[[H:[^:]*]]: tensor<4x?x512xf32>, %[[W:[^:]*]]: tensor<4x1024x512xf32>, %[[R:[^:]*]]: tensor<4x1024x512xf32>, %[[BIAS:[^:]*]]: tensor<4x512xf32>, %[[N:[^:]*]]: index)
// CHECK: %[[WE:.*]] = tensor.empty() : tensor<4x1024x1024xf32>
// CHECK: %[[W1:.*]] = tensor.insert_slice %[[W]] into %[[WE]][0, 0, 0] [4, 1024, 512] [1, 1, 1]
// CHECK: %[[WR:.*]] = tensor.insert_slice %[[R]] into %[[W1]][0, 0, 512] [4, 1024, 512] [1, 1, 1]
// CHECK: scf.for {{.*}} iter_args(%[[STATE:.*]] = %[[H]])
// CHECK: %[[B:.*]] = tensor.dim %[[H]], %c1
// CHECK: %[[XE:.*]] = tensor.empty(%[[B]]) : tensor<4x?x1024xf32>
// CHECK: %[[LEFT:.*]] = tensor.extract_slice %[[XE]][0, 0, 0] [4, %[[B]], 512] [1, 1, 1]
// CHECK: %[[G0:.*]] = tensor.insert_slice %[[X]] into %[[LEFT]][0, 0, 0] [1, %[[B]], 512]
// CHECK: %[[G1:.*]] = tensor.insert_slice %[[LINKS]] into %[[G0]][1, 0, 0] [3, %[[B]], 512]
// CHECK: %[[XH0:.*]] = tensor.insert_slice %[[G1]] into %[[XE]][0, 0, 0] [4, %[[B]], 512]
// CHECK: %[[XH:.*]] = tensor.insert_slice %[[STATE]] into %[[XH0]][0, 0, 512] [4, %[[B]], 512]
// CHECK-NOT: linalg.batch_matmul
// CHECK: %[[ZEROS:.*]] = linalg.fill
// CHECK-NEXT: %[[P:.*]] = linalg.batch_matmul indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}] ins(%[[XH]], %[[WR]] : tensor<4x?x1024xf32>, tensor<4x1024x1024xf32>) outs(%[[ZEROS]] : tensor<4x?x1024xf32>)
// CHECK-NOT: linalg.batch_matmul
// CHECK-DAG: %[[S0:.*]] = tensor.extract_slice %[[P]][0, 0, 0] [4, %{{.*}}, 512]
// CHECK-DAG: %[[S1:.*]] = tensor.extract_slice %[[P]][0, 0, 512] [4, %{{.*}}, 512]
// CHECK: linalg.generic {{.*}} ins(%[[S0]], %[[S1]], %[[BIAS]] : tensor<4x?x512xf32>, tensor<4x?x512xf32>, tensor<4x512xf32>)
// CHECK-NEXT: ^bb0(%[[A:[^:]*]]: f32, %[[C:[^:]*]]: f32, %[[D:[^:]*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[SIG:.*]] = arith.negf %[[A]]
// CHECK: %[[T:.*]] = arith.addf %[[C]], %[[D]]
// CHECK-NEXT: math.tanh %[[T]]
// With stack-batches (lstm-to-nvvm's choice in fp32): one batch of the
// eight matrices of depth 512 instead, the layers' input products first.
// The gather is built in the first half of the operand, the states copied
// into the second; the weights stacked the same way, before the loop. The
// cell reads each gate's two halves and still adds them.
// STACK-LABEL: func.func @diagonal
// STACK-SAME: (%[[X:[^:]*]]: tensor<?x512xf32>, %[[LINKS:[^:]*]]: tensor<3x?x512xf32>, %[[H:[^:]*]]: tensor<4x?x512xf32>, %[[W:[^:]*]]: tensor<4x1024x512xf32>, %[[R:[^:]*]]: tensor<4x1024x512xf32>, %[[BIAS:[^:]*]]: tensor<4x512xf32>, %[[N:[^:]*]]: index)
// STACK: %[[WE:.*]] = tensor.empty() : tensor<8x1024x512xf32>
// STACK: %[[W1:.*]] = tensor.insert_slice %[[W]] into %[[WE]][0, 0, 0] [4, 1024, 512] [1, 1, 1]
// STACK: %[[WR:.*]] = tensor.insert_slice %[[R]] into %[[W1]][4, 0, 0] [4, 1024, 512] [1, 1, 1]
// STACK: scf.for {{.*}} iter_args(%[[STATE:.*]] = %[[H]])
// STACK: %[[B:.*]] = tensor.dim %[[H]], %c1
// STACK: %[[XE:.*]] = tensor.empty(%[[B]]) : tensor<8x?x512xf32>
// STACK: %[[LEFT:.*]] = tensor.extract_slice %[[XE]][0, 0, 0] [4, %[[B]], 512] [1, 1, 1]
// STACK: %[[G0:.*]] = tensor.insert_slice %[[X]] into %[[LEFT]][0, 0, 0] [1, %[[B]], 512]
// STACK: %[[G1:.*]] = tensor.insert_slice %[[LINKS]] into %[[G0]][1, 0, 0] [3, %[[B]], 512]
// STACK: %[[XH0:.*]] = tensor.insert_slice %[[G1]] into %[[XE]][0, 0, 0] [4, %[[B]], 512]
// STACK: %[[XH:.*]] = tensor.insert_slice %[[STATE]] into %[[XH0]][4, 0, 0] [4, %[[B]], 512]
// STACK-NOT: linalg.batch_matmul
// STACK: %[[ZEROS:.*]] = linalg.fill
// STACK-NEXT: %[[P:.*]] = linalg.batch_matmul indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}] ins(%[[XH]], %[[WR]] : tensor<8x?x512xf32>, tensor<8x1024x512xf32>) outs(%[[ZEROS]] : tensor<8x?x1024xf32>)
// STACK-NOT: linalg.batch_matmul
// STACK-DAG: %[[X0:.*]] = tensor.extract_slice %[[P]][0, 0, 0] [4, %{{.*}}, 512]
// STACK-DAG: %[[H0:.*]] = tensor.extract_slice %[[P]][4, 0, 0] [4, %{{.*}}, 512]
// STACK-DAG: %[[X1:.*]] = tensor.extract_slice %[[P]][0, 0, 512] [4, %{{.*}}, 512]
// STACK-DAG: %[[H1:.*]] = tensor.extract_slice %[[P]][4, 0, 512] [4, %{{.*}}, 512]
// STACK: linalg.generic {{.*}} ins(%[[X0]], %[[H0]], %[[X1]], %[[BIAS]], %[[H1]] : tensor<4x?x512xf32>, tensor<4x?x512xf32>, tensor<4x?x512xf32>, tensor<4x512xf32>, tensor<4x?x512xf32>)
// STACK-NEXT: ^bb0(%[[A:[^:]*]]: f32, %[[C:[^:]*]]: f32, %[[D:[^:]*]]: f32, %[[E:[^:]*]]: f32, %[[F:[^:]*]]: f32, %{{.*}}: f32):
// STACK-NEXT: %[[S:.*]] = arith.addf %[[A]], %[[C]]
// STACK-NEXT: arith.negf %[[S]]
// STACK-NEXT: %[[T:.*]] = arith.addf %[[F]], %[[D]]
// STACK-NEXT: arith.addf %[[T]], %[[E]]
func.func @diagonal(%x: tensor<?x512xf32>, %links: tensor<3x?x512xf32>,
                    %h: tensor<4x?x512xf32>, %w: tensor<4x1024x512xf32>,
                    %r: tensor<4x1024x512xf32>, %bias: tensor<4x512xf32>,
                    %n: index) -> tensor<4x?x512xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %out = scf.for %i = %c0 to %n step %c1 iter_args(%state = %h) -> tensor<4x?x512xf32> {
    %b = tensor.dim %h, %c1 : tensor<4x?x512xf32>
    %e = tensor.empty(%b) : tensor<4x?x512xf32>
    %g0 = tensor.insert_slice %x into %e[0, 0, 0] [1, %b, 512] [1, 1, 1] : tensor<?x512xf32> into tensor<4x?x512xf32>
    %g = tensor.insert_slice %links into %g0[1, 0, 0] [3, %b, 512] [1, 1, 1] : tensor<3x?x512xf32> into tensor<4x?x512xf32>
    %pe = tensor.empty(%b) : tensor<4x?x1024xf32>
    %pz = linalg.fill ins(%zero : f32) outs(%pe : tensor<4x?x1024xf32>) -> tensor<4x?x1024xf32>
    %px = linalg.batch_matmul indexing_maps = [#x, #w, #c]
        ins(%g, %w : tensor<4x?x512xf32>, tensor<4x1024x512xf32>)
        outs(%pz : tensor<4x?x1024xf32>) -> tensor<4x?x1024xf32>
    %px0 = tensor.extract_slice %px[0, 0, 0] [4, %b, 512] [1, 1, 1] : tensor<4x?x1024xf32> to tensor<4x?x512xf32>
    %px1 = tensor.extract_slice %px[0, 0, 512] [4, %b, 512] [1, 1, 1] : tensor<4x?x1024xf32> to tensor<4x?x512xf32>
    %b2 = tensor.dim %state, %c1 : tensor<4x?x512xf32>
    %he = tensor.empty(%b2) : tensor<4x?x1024xf32>
    %hz = linalg.fill ins(%zero : f32) outs(%he : tensor<4x?x1024xf32>) -> tensor<4x?x1024xf32>
    %ph = linalg.batch_matmul indexing_maps = [#x, #w, #c]
        ins(%state, %r : tensor<4x?x512xf32>, tensor<4x1024x512xf32>)
        outs(%hz : tensor<4x?x1024xf32>) -> tensor<4x?x1024xf32>
    %ph0 = tensor.extract_slice %ph[0, 0, 0] [4, %b2, 512] [1, 1, 1] : tensor<4x?x1024xf32> to tensor<4x?x512xf32>
    %ph1 = tensor.extract_slice %ph[0, 0, 512] [4, %b2, 512] [1, 1, 1] : tensor<4x?x1024xf32> to tensor<4x?x512xf32>
    %cell = linalg.generic {indexing_maps = [#id, #id, #id, #vec, #id, #id],
                            iterator_types = ["parallel", "parallel", "parallel"]}
        ins(%px0, %ph0, %px1, %bias, %ph1 : tensor<4x?x512xf32>, tensor<4x?x512xf32>, tensor<4x?x512xf32>, tensor<4x512xf32>, tensor<4x?x512xf32>)
        outs(%e : tensor<4x?x512xf32>) {
    ^bb0(%a: f32, %bb: f32, %c: f32, %d: f32, %f: f32, %o: f32):
      %s0 = arith.addf %a, %bb : f32
      %n0 = arith.negf %s0 : f32
      %s1 = arith.addf %f, %c : f32
      %s2 = arith.addf %s1, %d : f32
      %t = math.tanh %s2 : f32
      %y = arith.mulf %n0, %t : f32
      linalg.yield %y : f32
    } -> tensor<4x?x512xf32>
    scf.yield %cell : tensor<4x?x512xf32>
  }
  return %out : tensor<4x?x512xf32>
}

// -----

// Plain matmuls of another depth each (an LSTMP cell's x and projected h),
// read whole, summed in either order: one product of depth 96 + 32.
// CHECK-LABEL: func.func @whole_products
// CHECK-SAME: (%[[X:[^:]*]]: tensor<8x96xf32>, %[[W:[^:]*]]: tensor<96x64xf32>, %[[H:[^:]*]]: tensor<8x32xf32>, %[[R:[^:]*]]: tensor<32x64xf32>)
// CHECK: %[[RE:.*]] = tensor.empty() : tensor<128x64xf32>
// CHECK: %[[R0:.*]] = tensor.insert_slice %[[W]] into %[[RE]][0, 0] [96, 64] [1, 1]
// CHECK: %[[WR:.*]] = tensor.insert_slice %[[R]] into %[[R0]][96, 0] [32, 64] [1, 1]
// CHECK: %[[LE:.*]] = tensor.empty() : tensor<8x128xf32>
// CHECK: %[[L0:.*]] = tensor.insert_slice %[[X]] into %[[LE]][0, 0] [8, 96] [1, 1]
// CHECK: %[[XH:.*]] = tensor.insert_slice %[[H]] into %[[L0]][0, 96] [8, 32] [1, 1]
// CHECK: linalg.fill
// CHECK-NEXT: %[[P:.*]] = linalg.matmul ins(%[[XH]], %[[WR]] : tensor<8x128xf32>, tensor<128x64xf32>)
// CHECK-NOT: linalg.matmul
// CHECK: linalg.generic {{.*}} ins(%[[P]] : tensor<8x64xf32>)
// CHECK-NEXT: ^bb0(%[[A:[^:]*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: math.tanh %[[A]]
// Not batched: with stack-batches too, one product of the concatenations.
// STACK-LABEL: func.func @whole_products
// STACK: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<8x128xf32>, tensor<128x64xf32>)
// STACK-NEXT: linalg.generic {{.*}} ins(%{{.*}} : tensor<8x64xf32>)
func.func @whole_products(%x: tensor<8x96xf32>, %w: tensor<96x64xf32>,
                          %h: tensor<8x32xf32>, %r: tensor<32x64xf32>) -> tensor<8x64xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x64xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x64xf32>) -> tensor<8x64xf32>
  %px = linalg.matmul ins(%x, %w : tensor<8x96xf32>, tensor<96x64xf32>) outs(%z : tensor<8x64xf32>) -> tensor<8x64xf32>
  %z2 = linalg.fill ins(%zero : f32) outs(%e : tensor<8x64xf32>) -> tensor<8x64xf32>
  %ph = linalg.matmul ins(%h, %r : tensor<8x32xf32>, tensor<32x64xf32>) outs(%z2 : tensor<8x64xf32>) -> tensor<8x64xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(b, n) -> (b, n)>, affine_map<(b, n) -> (b, n)>, affine_map<(b, n) -> (b, n)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%ph, %px : tensor<8x64xf32>, tensor<8x64xf32>) outs(%e : tensor<8x64xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %b, %a : f32
    %t = math.tanh %s : f32
    linalg.yield %t : f32
  } -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

// Left alone: a product also read elsewhere (its value is needed on its
// own), a sum that is not of the two reads alone (a third term in
// between), slices of different columns, a product into a non-zero
// accumulator, and products of different kinds.
// CHECK-LABEL: func.func @left_alone
// CHECK-COUNT-2: linalg.matmul
// CHECK-LABEL: func.func @not_a_pair
// CHECK-COUNT-2: linalg.matmul
// CHECK-LABEL: func.func @other_columns
// CHECK-COUNT-2: linalg.matmul
// CHECK-LABEL: func.func @accumulated
// CHECK-COUNT-2: linalg.matmul
#m = affine_map<(b, n) -> (b, n)>
func.func @left_alone(%x: tensor<8x16xf32>, %w: tensor<16x64xf32>,
                      %h: tensor<8x16xf32>, %r: tensor<16x64xf32>) -> (tensor<8x64xf32>, tensor<8x64xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x64xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x64xf32>) -> tensor<8x64xf32>
  %px = linalg.matmul ins(%x, %w : tensor<8x16xf32>, tensor<16x64xf32>) outs(%z : tensor<8x64xf32>) -> tensor<8x64xf32>
  %ph = linalg.matmul ins(%h, %r : tensor<8x16xf32>, tensor<16x64xf32>) outs(%z : tensor<8x64xf32>) -> tensor<8x64xf32>
  %y = linalg.generic {indexing_maps = [#m, #m, #m], iterator_types = ["parallel", "parallel"]}
      ins(%px, %ph : tensor<8x64xf32>, tensor<8x64xf32>) outs(%e : tensor<8x64xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<8x64xf32>
  return %y, %px : tensor<8x64xf32>, tensor<8x64xf32>
}
func.func @not_a_pair(%x: tensor<8x16xf32>, %w: tensor<16x64xf32>,
                      %h: tensor<8x16xf32>, %r: tensor<16x64xf32>, %k: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x64xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x64xf32>) -> tensor<8x64xf32>
  %px = linalg.matmul ins(%x, %w : tensor<8x16xf32>, tensor<16x64xf32>) outs(%z : tensor<8x64xf32>) -> tensor<8x64xf32>
  %ph = linalg.matmul ins(%h, %r : tensor<8x16xf32>, tensor<16x64xf32>) outs(%z : tensor<8x64xf32>) -> tensor<8x64xf32>
  %y = linalg.generic {indexing_maps = [#m, #m, #m, #m], iterator_types = ["parallel", "parallel"]}
      ins(%px, %ph, %k : tensor<8x64xf32>, tensor<8x64xf32>, tensor<8x64xf32>) outs(%e : tensor<8x64xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32, %o: f32):
    %s = arith.addf %a, %c : f32
    %t = arith.addf %s, %b : f32
    linalg.yield %t : f32
  } -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}
func.func @other_columns(%x: tensor<8x16xf32>, %w: tensor<16x64xf32>,
                         %h: tensor<8x16xf32>, %r: tensor<16x64xf32>) -> tensor<8x32xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x64xf32>
  %e2 = tensor.empty() : tensor<8x32xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x64xf32>) -> tensor<8x64xf32>
  %px = linalg.matmul ins(%x, %w : tensor<8x16xf32>, tensor<16x64xf32>) outs(%z : tensor<8x64xf32>) -> tensor<8x64xf32>
  %ph = linalg.matmul ins(%h, %r : tensor<8x16xf32>, tensor<16x64xf32>) outs(%z : tensor<8x64xf32>) -> tensor<8x64xf32>
  %sx = tensor.extract_slice %px[0, 0] [8, 32] [1, 1] : tensor<8x64xf32> to tensor<8x32xf32>
  %sh = tensor.extract_slice %ph[0, 32] [8, 32] [1, 1] : tensor<8x64xf32> to tensor<8x32xf32>
  %y = linalg.generic {indexing_maps = [#m, #m, #m], iterator_types = ["parallel", "parallel"]}
      ins(%sx, %sh : tensor<8x32xf32>, tensor<8x32xf32>) outs(%e2 : tensor<8x32xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<8x32xf32>
  return %y : tensor<8x32xf32>
}
func.func @accumulated(%x: tensor<8x16xf32>, %w: tensor<16x64xf32>,
                       %h: tensor<8x16xf32>, %r: tensor<16x64xf32>, %acc: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x64xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x64xf32>) -> tensor<8x64xf32>
  %px = linalg.matmul ins(%x, %w : tensor<8x16xf32>, tensor<16x64xf32>) outs(%acc : tensor<8x64xf32>) -> tensor<8x64xf32>
  %ph = linalg.matmul ins(%h, %r : tensor<8x16xf32>, tensor<16x64xf32>) outs(%z : tensor<8x64xf32>) -> tensor<8x64xf32>
  %y = linalg.generic {indexing_maps = [#m, #m, #m], iterator_types = ["parallel", "parallel"]}
      ins(%px, %ph : tensor<8x64xf32>, tensor<8x64xf32>) outs(%e : tensor<8x64xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

// Slices of some of the rows of products whose rows are dynamic: equal
// slices do not make the products' row counts (and so their operands')
// equal, which the concatenation needs. Left alone.
// CHECK-LABEL: func.func @some_rows
// CHECK-COUNT-2: linalg.matmul
func.func @some_rows(%x: tensor<?x16xf32>, %w: tensor<16x64xf32>,
                     %h: tensor<?x16xf32>, %r: tensor<16x64xf32>, %n: index) -> tensor<?x64xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %bx = tensor.dim %x, %c0 : tensor<?x16xf32>
  %bh = tensor.dim %h, %c0 : tensor<?x16xf32>
  %ex = tensor.empty(%bx) : tensor<?x64xf32>
  %zx = linalg.fill ins(%zero : f32) outs(%ex : tensor<?x64xf32>) -> tensor<?x64xf32>
  %px = linalg.matmul ins(%x, %w : tensor<?x16xf32>, tensor<16x64xf32>) outs(%zx : tensor<?x64xf32>) -> tensor<?x64xf32>
  %eh = tensor.empty(%bh) : tensor<?x64xf32>
  %zh = linalg.fill ins(%zero : f32) outs(%eh : tensor<?x64xf32>) -> tensor<?x64xf32>
  %ph = linalg.matmul ins(%h, %r : tensor<?x16xf32>, tensor<16x64xf32>) outs(%zh : tensor<?x64xf32>) -> tensor<?x64xf32>
  %sx = tensor.extract_slice %px[0, 0] [%n, 64] [1, 1] : tensor<?x64xf32> to tensor<?x64xf32>
  %sh = tensor.extract_slice %ph[0, 0] [%n, 64] [1, 1] : tensor<?x64xf32> to tensor<?x64xf32>
  %e = tensor.empty(%n) : tensor<?x64xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(b, n) -> (b, n)>, affine_map<(b, n) -> (b, n)>, affine_map<(b, n) -> (b, n)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%sx, %sh : tensor<?x64xf32>, tensor<?x64xf32>) outs(%e : tensor<?x64xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}

// -----

#x = affine_map<(l, b, h, k) -> (l, b, k)>
#w = affine_map<(l, b, h, k) -> (l, h, k)>
#c = affine_map<(l, b, h, k) -> (l, b, h)>
#id = affine_map<(l, b, n) -> (l, b, n)>

// Cho's GRU's forward diagonal (2 layers, hidden 4): the input product has
// three gates' columns, the recurrent one two (r and z; n's recurrent
// product reads r ⊙ h). The reset and update gates add the two; n reads
// the input product's last columns alone, through a slice made before the
// recurrent product. One product: the recurrent weights get zero rows for
// n's columns, the new product's last columns are n's input product (plus
// zeros), and n's slice moves after it.
// Without pad-columns (lstm-to-nvvm's choice in fp32), the two stay; with
// stack-batches the products of different widths are concatenated.
// STACK-LABEL: func.func @gru_columns
// STACK: linalg.batch_matmul {{.*}} outs(%{{.*}} : tensor<2x?x12xf32>)
// STACK-NOT: linalg.batch_matmul
// STACK: return
// NOPAD-LABEL: func.func @gru_columns
// NOPAD-COUNT-2: linalg.batch_matmul
// NOPAD: return
// With pad-stacks (lstm-to-nvvm's choice in fp32) the two run as one batch
// of four matrices, each of the wider product's 12 columns: the recurrent
// weights padded with zero rows for n's columns, stacked after the input
// weights; the reset and update gates read their columns of both halves,
// n its columns of the first half, in a slice made after the product.
// PADSTACK-LABEL: func.func @gru_columns
// PADSTACK-SAME: (%[[X:[^:]*]]: tensor<2x?x4xf32>, %[[H:[^:]*]]: tensor<2x?x4xf32>, %[[W:[^:]*]]: tensor<2x12x4xf32>, %[[R:[^:]*]]: tensor<2x8x4xf32>, %[[B:[^:]*]]: index)
// PADSTACK: %[[XH0:.*]] = tensor.insert_slice %[[X]] into %{{.*}}[0, 0, 0] [2, %{{.*}}, 4] [1, 1, 1] : tensor<2x?x4xf32> into tensor<4x?x4xf32>
// PADSTACK: %[[XH:.*]] = tensor.insert_slice %[[H]] into %[[XH0]][2, 0, 0] [2, %{{.*}}, 4] [1, 1, 1] : tensor<2x?x4xf32> into tensor<4x?x4xf32>
// PADSTACK: %[[Z:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<2x4x4xf32>)
// PADSTACK: %[[R0:.*]] = tensor.insert_slice %[[R]] into %{{.*}}[0, 0, 0] [2, 8, 4] [1, 1, 1] : tensor<2x8x4xf32> into tensor<2x12x4xf32>
// PADSTACK: %[[RPAD:.*]] = tensor.insert_slice %[[Z]] into %[[R0]][0, 8, 0] [2, 4, 4] [1, 1, 1] : tensor<2x4x4xf32> into tensor<2x12x4xf32>
// PADSTACK: %[[W0:.*]] = tensor.insert_slice %[[W]] into %{{.*}}[0, 0, 0] [2, 12, 4] [1, 1, 1] : tensor<2x12x4xf32> into tensor<4x12x4xf32>
// PADSTACK: %[[WR:.*]] = tensor.insert_slice %[[RPAD]] into %[[W0]][2, 0, 0] [2, 12, 4] [1, 1, 1] : tensor<2x12x4xf32> into tensor<4x12x4xf32>
// PADSTACK-NOT: linalg.batch_matmul
// PADSTACK: %[[ZEROS:.*]] = linalg.fill
// PADSTACK-NEXT: %[[P:.*]] = linalg.batch_matmul {{.*}} ins(%[[XH]], %[[WR]] : tensor<4x?x4xf32>, tensor<4x12x4xf32>) outs(%[[ZEROS]] : tensor<4x?x12xf32>)
// PADSTACK-NEXT: %[[N:.*]] = tensor.extract_slice %[[P]][0, 0, 8] [2, %[[B]], 4]
// PADSTACK-NOT: linalg.batch_matmul
// PADSTACK-DAG: %[[X0:.*]] = tensor.extract_slice %[[P]][0, 0, 0] [2, %[[B]], 4]
// PADSTACK-DAG: %[[H0:.*]] = tensor.extract_slice %[[P]][2, 0, 0] [2, %[[B]], 4]
// PADSTACK-DAG: %[[X1:.*]] = tensor.extract_slice %[[P]][0, 0, 4] [2, %[[B]], 4]
// PADSTACK-DAG: %[[H1:.*]] = tensor.extract_slice %[[P]][2, 0, 4] [2, %[[B]], 4]
// PADSTACK: linalg.generic {{.*}} ins(%[[X0]], %[[H0]], %[[X1]], %[[H1]] : tensor<2x?x4xf32>, tensor<2x?x4xf32>, tensor<2x?x4xf32>, tensor<2x?x4xf32>)
// PADSTACK: linalg.generic {{.*}} ins(%[[N]] : tensor<2x?x4xf32>)
// CHECK-LABEL: func.func @gru_columns
// CHECK-SAME: (%[[X:[^:]*]]: tensor<2x?x4xf32>, %[[H:[^:]*]]: tensor<2x?x4xf32>, %[[W:[^:]*]]: tensor<2x12x4xf32>, %[[R:[^:]*]]: tensor<2x8x4xf32>, %[[B:[^:]*]]: index)
// CHECK: %[[ZE:.*]] = tensor.empty() : tensor<2x4x4xf32>
// CHECK: %[[Z:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[ZE]] : tensor<2x4x4xf32>)
// CHECK: %[[RE:.*]] = tensor.empty() : tensor<2x12x4xf32>
// CHECK: %[[R0:.*]] = tensor.insert_slice %[[R]] into %[[RE]][0, 0, 0] [2, 8, 4] [1, 1, 1]
// CHECK: %[[RPAD:.*]] = tensor.insert_slice %[[Z]] into %[[R0]][0, 8, 0] [2, 4, 4] [1, 1, 1]
// CHECK: %[[WE:.*]] = tensor.empty() : tensor<2x12x8xf32>
// CHECK: %[[W0:.*]] = tensor.insert_slice %[[W]] into %[[WE]][0, 0, 0] [2, 12, 4] [1, 1, 1]
// CHECK: %[[WR:.*]] = tensor.insert_slice %[[RPAD]] into %[[W0]][0, 0, 4] [2, 12, 4] [1, 1, 1]
// CHECK-NOT: linalg.batch_matmul
// CHECK: %[[ZEROS:.*]] = linalg.fill
// CHECK-NEXT: %[[P:.*]] = linalg.batch_matmul {{.*}} ins(%{{.*}}, %[[WR]] : tensor<2x?x8xf32>, tensor<2x12x8xf32>) outs(%[[ZEROS]] : tensor<2x?x12xf32>)
// CHECK-NEXT: %[[N:.*]] = tensor.extract_slice %[[P]][0, 0, 8] [2, %[[B]], 4]
// CHECK-NOT: linalg.batch_matmul
// CHECK-DAG: %[[S0:.*]] = tensor.extract_slice %[[P]][0, 0, 0] [2, %[[B]], 4]
// CHECK-DAG: %[[S1:.*]] = tensor.extract_slice %[[P]][0, 0, 4] [2, %[[B]], 4]
// CHECK: linalg.generic {{.*}} ins(%[[S0]], %[[S1]] : tensor<2x?x4xf32>, tensor<2x?x4xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[N]] : tensor<2x?x4xf32>)
func.func @gru_columns(%x: tensor<2x?x4xf32>, %h: tensor<2x?x4xf32>,
                       %w: tensor<2x12x4xf32>, %r: tensor<2x8x4xf32>, %b: index)
    -> (tensor<2x?x4xf32>, tensor<2x?x4xf32>, tensor<2x?x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %pe = tensor.empty(%b) : tensor<2x?x12xf32>
  %pz = linalg.fill ins(%zero : f32) outs(%pe : tensor<2x?x12xf32>) -> tensor<2x?x12xf32>
  %px = linalg.batch_matmul indexing_maps = [#x, #w, #c]
      ins(%x, %w : tensor<2x?x4xf32>, tensor<2x12x4xf32>)
      outs(%pz : tensor<2x?x12xf32>) -> tensor<2x?x12xf32>
  %pxn = tensor.extract_slice %px[0, 0, 8] [2, %b, 4] [1, 1, 1] : tensor<2x?x12xf32> to tensor<2x?x4xf32>
  %he = tensor.empty(%b) : tensor<2x?x8xf32>
  %hz = linalg.fill ins(%zero : f32) outs(%he : tensor<2x?x8xf32>) -> tensor<2x?x8xf32>
  %ph = linalg.batch_matmul indexing_maps = [#x, #w, #c]
      ins(%h, %r : tensor<2x?x4xf32>, tensor<2x8x4xf32>)
      outs(%hz : tensor<2x?x8xf32>) -> tensor<2x?x8xf32>
  %px0 = tensor.extract_slice %px[0, 0, 0] [2, %b, 4] [1, 1, 1] : tensor<2x?x12xf32> to tensor<2x?x4xf32>
  %px1 = tensor.extract_slice %px[0, 0, 4] [2, %b, 4] [1, 1, 1] : tensor<2x?x12xf32> to tensor<2x?x4xf32>
  %ph0 = tensor.extract_slice %ph[0, 0, 0] [2, %b, 4] [1, 1, 1] : tensor<2x?x8xf32> to tensor<2x?x4xf32>
  %ph1 = tensor.extract_slice %ph[0, 0, 4] [2, %b, 4] [1, 1, 1] : tensor<2x?x8xf32> to tensor<2x?x4xf32>
  %e = tensor.empty(%b) : tensor<2x?x4xf32>
  %rz:2 = linalg.generic {indexing_maps = [#id, #id, #id, #id, #id, #id],
                          iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%px0, %ph0, %px1, %ph1 : tensor<2x?x4xf32>, tensor<2x?x4xf32>, tensor<2x?x4xf32>, tensor<2x?x4xf32>)
      outs(%e, %e : tensor<2x?x4xf32>, tensor<2x?x4xf32>) {
  ^bb0(%a: f32, %c: f32, %d: f32, %f: f32, %o0: f32, %o1: f32):
    %s0 = arith.addf %a, %c : f32
    %s1 = arith.addf %d, %f : f32
    linalg.yield %s0, %s1 : f32, f32
  } -> (tensor<2x?x4xf32>, tensor<2x?x4xf32>)
  %n = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%pxn : tensor<2x?x4xf32>) outs(%e : tensor<2x?x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = math.tanh %a : f32
    linalg.yield %t : f32
  } -> tensor<2x?x4xf32>
  return %rz#0, %rz#1, %n : tensor<2x?x4xf32>, tensor<2x?x4xf32>, tensor<2x?x4xf32>
}

// -----

#x = affine_map<(l, b, h, k) -> (l, b, k)>
#w = affine_map<(l, b, h, k) -> (l, h, k)>
#c = affine_map<(l, b, h, k) -> (l, b, h)>
#id = affine_map<(l, b, n) -> (l, b, n)>

// Cho's GRU's forward diagonal as the pipeline has it: the reset gate's
// pair added in one generic (r ⊙ h, which the third gate's recurrent
// product reads), the update gate's in the next, which reads n's input
// columns too. The pairs of one pair of products are taken together
// across generics: one product (concatenated by default, stacked with
// pad-stacks), each generic reading its columns of it.
// CHECK-LABEL: func.func @gru_two_generics
// CHECK: linalg.batch_matmul {{.*}} outs(%{{.*}} : tensor<2x?x12xf32>)
// CHECK-NOT: linalg.batch_matmul
// CHECK: linalg.generic
// CHECK: linalg.generic
// PADSTACK-LABEL: func.func @gru_two_generics
// PADSTACK: %[[P:.*]] = linalg.batch_matmul {{.*}} outs(%{{.*}} : tensor<4x?x12xf32>)
// PADSTACK-NEXT: %[[N:.*]] = tensor.extract_slice %[[P]][0, 0, 8] [2, %{{.*}}, 4]
// PADSTACK-NOT: linalg.batch_matmul
// PADSTACK-DAG: %[[X0:.*]] = tensor.extract_slice %[[P]][0, 0, 0] [2, %{{.*}}, 4]
// PADSTACK-DAG: %[[H0:.*]] = tensor.extract_slice %[[P]][2, 0, 0] [2, %{{.*}}, 4]
// PADSTACK: linalg.generic {{.*}} ins(%[[X0]], %[[H0]], %{{.*}} : tensor<2x?x4xf32>, tensor<2x?x4xf32>, tensor<2x?x4xf32>)
// PADSTACK-DAG: %[[X1:.*]] = tensor.extract_slice %[[P]][0, 0, 4] [2, %{{.*}}, 4]
// PADSTACK-DAG: %[[H1:.*]] = tensor.extract_slice %[[P]][2, 0, 4] [2, %{{.*}}, 4]
// PADSTACK: linalg.generic {{.*}} ins(%[[X1]], %[[H1]], %[[N]], %{{.*}} : tensor<2x?x4xf32>, tensor<2x?x4xf32>, tensor<2x?x4xf32>, tensor<2x?x4xf32>)
// NOPAD-LABEL: func.func @gru_two_generics
// NOPAD-COUNT-2: linalg.batch_matmul
// NOPAD: return
func.func @gru_two_generics(%x: tensor<2x?x4xf32>, %h: tensor<2x?x4xf32>,
                            %w: tensor<2x12x4xf32>, %r: tensor<2x8x4xf32>, %b: index)
    -> (tensor<2x?x4xf32>, tensor<2x?x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %pe = tensor.empty(%b) : tensor<2x?x12xf32>
  %pz = linalg.fill ins(%zero : f32) outs(%pe : tensor<2x?x12xf32>) -> tensor<2x?x12xf32>
  %px = linalg.batch_matmul indexing_maps = [#x, #w, #c]
      ins(%x, %w : tensor<2x?x4xf32>, tensor<2x12x4xf32>)
      outs(%pz : tensor<2x?x12xf32>) -> tensor<2x?x12xf32>
  %px0 = tensor.extract_slice %px[0, 0, 0] [2, %b, 4] [1, 1, 1] : tensor<2x?x12xf32> to tensor<2x?x4xf32>
  %px1 = tensor.extract_slice %px[0, 0, 4] [2, %b, 4] [1, 1, 1] : tensor<2x?x12xf32> to tensor<2x?x4xf32>
  %pxn = tensor.extract_slice %px[0, 0, 8] [2, %b, 4] [1, 1, 1] : tensor<2x?x12xf32> to tensor<2x?x4xf32>
  %he = tensor.empty(%b) : tensor<2x?x8xf32>
  %hz = linalg.fill ins(%zero : f32) outs(%he : tensor<2x?x8xf32>) -> tensor<2x?x8xf32>
  %ph = linalg.batch_matmul indexing_maps = [#x, #w, #c]
      ins(%h, %r : tensor<2x?x4xf32>, tensor<2x8x4xf32>)
      outs(%hz : tensor<2x?x8xf32>) -> tensor<2x?x8xf32>
  %ph0 = tensor.extract_slice %ph[0, 0, 0] [2, %b, 4] [1, 1, 1] : tensor<2x?x8xf32> to tensor<2x?x4xf32>
  %ph1 = tensor.extract_slice %ph[0, 0, 4] [2, %b, 4] [1, 1, 1] : tensor<2x?x8xf32> to tensor<2x?x4xf32>
  %e = tensor.empty(%b) : tensor<2x?x4xf32>
  %rh = linalg.generic {indexing_maps = [#id, #id, #id, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%px0, %ph0, %h : tensor<2x?x4xf32>, tensor<2x?x4xf32>, tensor<2x?x4xf32>)
      outs(%e : tensor<2x?x4xf32>) {
  ^bb0(%a: f32, %c: f32, %s: f32, %o: f32):
    %sum = arith.addf %a, %c : f32
    %gate = math.tanh %sum : f32
    %m = arith.mulf %gate, %s : f32
    linalg.yield %m : f32
  } -> tensor<2x?x4xf32>
  %zn = linalg.generic {indexing_maps = [#id, #id, #id, #id, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%px1, %ph1, %pxn, %rh : tensor<2x?x4xf32>, tensor<2x?x4xf32>, tensor<2x?x4xf32>, tensor<2x?x4xf32>)
      outs(%e : tensor<2x?x4xf32>) {
  ^bb0(%a: f32, %c: f32, %n: f32, %q: f32, %o: f32):
    %sum = arith.addf %a, %c : f32
    %t = arith.mulf %sum, %n : f32
    %u = arith.addf %t, %q : f32
    linalg.yield %u : f32
  } -> tensor<2x?x4xf32>
  return %rh, %zn : tensor<2x?x4xf32>, tensor<2x?x4xf32>
}

// -----

#x = affine_map<(l, b, h, k) -> (l, b, k)>
#w = affine_map<(l, b, h, k) -> (l, h, k)>
#c = affine_map<(l, b, h, k) -> (l, b, h)>
#id = affine_map<(l, b, n) -> (l, b, n)>

// Left alone: the wider product is also read, alone, in columns that the
// narrower one has (the combined product would add the narrower's there).
// CHECK-LABEL: func.func @gru_columns_overlap
// CHECK-COUNT-2: linalg.batch_matmul
func.func @gru_columns_overlap(%x: tensor<2x?x4xf32>, %h: tensor<2x?x4xf32>,
                               %w: tensor<2x12x4xf32>, %r: tensor<2x8x4xf32>, %b: index)
    -> (tensor<2x?x4xf32>, tensor<2x?x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %pe = tensor.empty(%b) : tensor<2x?x12xf32>
  %pz = linalg.fill ins(%zero : f32) outs(%pe : tensor<2x?x12xf32>) -> tensor<2x?x12xf32>
  %px = linalg.batch_matmul indexing_maps = [#x, #w, #c]
      ins(%x, %w : tensor<2x?x4xf32>, tensor<2x12x4xf32>)
      outs(%pz : tensor<2x?x12xf32>) -> tensor<2x?x12xf32>
  %he = tensor.empty(%b) : tensor<2x?x8xf32>
  %hz = linalg.fill ins(%zero : f32) outs(%he : tensor<2x?x8xf32>) -> tensor<2x?x8xf32>
  %ph = linalg.batch_matmul indexing_maps = [#x, #w, #c]
      ins(%h, %r : tensor<2x?x4xf32>, tensor<2x8x4xf32>)
      outs(%hz : tensor<2x?x8xf32>) -> tensor<2x?x8xf32>
  %px0 = tensor.extract_slice %px[0, 0, 0] [2, %b, 4] [1, 1, 1] : tensor<2x?x12xf32> to tensor<2x?x4xf32>
  %ph0 = tensor.extract_slice %ph[0, 0, 0] [2, %b, 4] [1, 1, 1] : tensor<2x?x8xf32> to tensor<2x?x4xf32>
  %e = tensor.empty(%b) : tensor<2x?x4xf32>
  %s = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%px0, %ph0 : tensor<2x?x4xf32>, tensor<2x?x4xf32>) outs(%e : tensor<2x?x4xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %t = arith.addf %a, %c : f32
    linalg.yield %t : f32
  } -> tensor<2x?x4xf32>
  %pz1 = tensor.extract_slice %px[0, 0, 4] [2, %b, 4] [1, 1, 1] : tensor<2x?x12xf32> to tensor<2x?x4xf32>
  return %s, %pz1 : tensor<2x?x4xf32>, tensor<2x?x4xf32>
}

// -----

#x = affine_map<(l, b, h, k) -> (l, b, k)>
#w = affine_map<(l, b, h, k) -> (l, h, k)>
#c = affine_map<(l, b, h, k) -> (l, b, h)>
#id = affine_map<(l, b, n) -> (l, b, n)>

// Products of different widths and depths (an input of 6 features, a state
// of 4): concatenated with zero weights under pad-columns (the default),
// left apart with pad-stacks alone, which stacks only equal depths.
// CHECK-LABEL: func.func @gru_other_depths
// CHECK: linalg.batch_matmul {{.*}} ins(%{{.*}}, %{{.*}} : tensor<2x?x10xf32>, tensor<2x12x10xf32>)
// CHECK-NOT: linalg.batch_matmul
// CHECK: return
// PADSTACK-LABEL: func.func @gru_other_depths
// PADSTACK-COUNT-2: linalg.batch_matmul
// PADSTACK-NOT: linalg.batch_matmul
// PADSTACK: return
func.func @gru_other_depths(%x: tensor<2x?x6xf32>, %h: tensor<2x?x4xf32>,
                            %w: tensor<2x12x6xf32>, %r: tensor<2x8x4xf32>, %b: index)
    -> (tensor<2x?x4xf32>, tensor<2x?x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %pe = tensor.empty(%b) : tensor<2x?x12xf32>
  %pz = linalg.fill ins(%zero : f32) outs(%pe : tensor<2x?x12xf32>) -> tensor<2x?x12xf32>
  %px = linalg.batch_matmul indexing_maps = [#x, #w, #c]
      ins(%x, %w : tensor<2x?x6xf32>, tensor<2x12x6xf32>)
      outs(%pz : tensor<2x?x12xf32>) -> tensor<2x?x12xf32>
  %px0 = tensor.extract_slice %px[0, 0, 0] [2, %b, 4] [1, 1, 1] : tensor<2x?x12xf32> to tensor<2x?x4xf32>
  %px1 = tensor.extract_slice %px[0, 0, 4] [2, %b, 4] [1, 1, 1] : tensor<2x?x12xf32> to tensor<2x?x4xf32>
  %pxn = tensor.extract_slice %px[0, 0, 8] [2, %b, 4] [1, 1, 1] : tensor<2x?x12xf32> to tensor<2x?x4xf32>
  %he = tensor.empty(%b) : tensor<2x?x8xf32>
  %hz = linalg.fill ins(%zero : f32) outs(%he : tensor<2x?x8xf32>) -> tensor<2x?x8xf32>
  %ph = linalg.batch_matmul indexing_maps = [#x, #w, #c]
      ins(%h, %r : tensor<2x?x4xf32>, tensor<2x8x4xf32>)
      outs(%hz : tensor<2x?x8xf32>) -> tensor<2x?x8xf32>
  %ph0 = tensor.extract_slice %ph[0, 0, 0] [2, %b, 4] [1, 1, 1] : tensor<2x?x8xf32> to tensor<2x?x4xf32>
  %ph1 = tensor.extract_slice %ph[0, 0, 4] [2, %b, 4] [1, 1, 1] : tensor<2x?x8xf32> to tensor<2x?x4xf32>
  %e = tensor.empty(%b) : tensor<2x?x4xf32>
  %rz = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%px0, %ph0 : tensor<2x?x4xf32>, tensor<2x?x4xf32>)
      outs(%e : tensor<2x?x4xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %s = arith.addf %a, %c : f32
    %t = math.tanh %s : f32
    linalg.yield %t : f32
  } -> tensor<2x?x4xf32>
  %zn = linalg.generic {indexing_maps = [#id, #id, #id, #id, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%px1, %ph1, %pxn, %rz : tensor<2x?x4xf32>, tensor<2x?x4xf32>, tensor<2x?x4xf32>, tensor<2x?x4xf32>)
      outs(%e : tensor<2x?x4xf32>) {
  ^bb0(%a: f32, %c: f32, %n: f32, %q: f32, %o: f32):
    %s = arith.addf %a, %c : f32
    %t = arith.mulf %s, %n : f32
    %u = arith.addf %t, %q : f32
    linalg.yield %u : f32
  } -> tensor<2x?x4xf32>
  return %rz, %zn : tensor<2x?x4xf32>, tensor<2x?x4xf32>
}

// -----

#x = affine_map<(l, b, h, k) -> (l, b, k)>
#w = affine_map<(l, b, h, k) -> (l, h, k)>
#c = affine_map<(l, b, h, k) -> (l, b, h)>
#id = affine_map<(l, b, n) -> (l, b, n)>

// Cho's GRU's forward diagonal with its third product: n's input columns
// are added to the product of r ⊙ h (split-columns, the default). The
// input product splits at the recurrent product's 8 columns: its first 8
// (the weights' rows 0-7, sliced once) combine with the recurrent product,
// [x h] · [W_rz R_rz]ᵀ; its last 4 (rows 8-11) with the product of r ⊙ h,
// [x (r ⊙ h)] · [W_n R_n]ᵀ, whose operand reads x from the first one's and
// has the generic computing r ⊙ h write its right half. No zeros, two
// products instead of three, under each option (with stack-batches as two
// batches of equal widths).
// CHECK-LABEL: func.func @gru_third_product
// CHECK-SAME: (%[[X:[^:]*]]: tensor<2x?x4xf32>, %[[H:[^:]*]]: tensor<2x?x4xf32>, %[[W:[^:]*]]: tensor<2x12x4xf32>, %[[R:[^:]*]]: tensor<2x8x4xf32>, %[[RN:[^:]*]]: tensor<2x4x4xf32>, %[[B:[^:]*]]: index)
// CHECK-NOT: linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<2x4x4xf32>)
// CHECK: %[[XH:.*]] = tensor.insert_slice %[[H]] into %{{.*}}[0, 0, 4] [2, %{{.*}}, 4] [1, 1, 1] : tensor<2x?x4xf32> into tensor<2x?x8xf32>
// CHECK-DAG: %[[WRZ:.*]] = tensor.extract_slice %[[W]][0, 0, 0] [2, 8, 4] [1, 1, 1] : tensor<2x12x4xf32> to tensor<2x8x4xf32>
// CHECK-DAG: %[[WN:.*]] = tensor.extract_slice %[[W]][0, 8, 0] [2, 4, 4] [1, 1, 1] : tensor<2x12x4xf32> to tensor<2x4x4xf32>
// CHECK-DAG: %[[WN0:.*]] = tensor.insert_slice %[[WN]] into %{{.*}}[0, 0, 0] [2, 4, 4]
// CHECK-DAG: %[[WNR:.*]] = tensor.insert_slice %[[RN]] into %[[WN0]][0, 0, 4] [2, 4, 4]
// CHECK-DAG: %[[WRZ0:.*]] = tensor.insert_slice %[[WRZ]] into %{{.*}}[0, 0, 0] [2, 8, 4]
// CHECK-DAG: %[[WR:.*]] = tensor.insert_slice %[[R]] into %[[WRZ0]][0, 0, 4] [2, 8, 4]
// CHECK: %[[P:.*]] = linalg.batch_matmul {{.*}} ins(%[[XH]], %[[WR]] : tensor<2x?x8xf32>, tensor<2x8x8xf32>) outs(%{{.*}} : tensor<2x?x8xf32>)
// CHECK: %[[E:.*]] = tensor.empty(%{{.*}}) : tensor<2x?x8xf32>
// CHECK: %[[RIGHT:.*]] = tensor.extract_slice %[[E]][0, 0, 4] [2, %{{.*}}, 4] [1, 1, 1]
// CHECK: %[[RH:.*]] = linalg.generic {{.*}} outs(%[[RIGHT]] : tensor<2x?x4xf32>)
// CHECK: %[[XAGAIN:.*]] = tensor.extract_slice %[[XH]][0, 0, 0] [2, %{{.*}}, 4] [1, 1, 1] : tensor<2x?x8xf32> to tensor<2x?x4xf32>
// CHECK: %[[XR0:.*]] = tensor.insert_slice %[[XAGAIN]] into %[[E]][0, 0, 0]
// CHECK: %[[XR:.*]] = tensor.insert_slice %[[RH]] into %[[XR0]][0, 0, 4]
// CHECK: %[[PN:.*]] = linalg.batch_matmul {{.*}} ins(%[[XR]], %[[WNR]] : tensor<2x?x8xf32>, tensor<2x4x8xf32>) outs(%{{.*}} : tensor<2x?x4xf32>)
// CHECK-NOT: linalg.batch_matmul
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[PN]] : tensor<2x?x4xf32>, tensor<2x?x4xf32>)
// NOPAD-LABEL: func.func @gru_third_product
// NOPAD-COUNT-2: linalg.batch_matmul {{.*}} : tensor<2x?x8xf32>
// NOPAD-NOT: linalg.batch_matmul
// STACK-LABEL: func.func @gru_third_product
// STACK: linalg.batch_matmul {{.*}} ins(%{{.*}}, %{{.*}} : tensor<4x?x4xf32>, tensor<4x8x4xf32>)
// STACK: linalg.batch_matmul {{.*}} ins(%{{.*}}, %{{.*}} : tensor<4x?x4xf32>, tensor<4x4x4xf32>)
// STACK-NOT: linalg.batch_matmul
// PADSTACK-LABEL: func.func @gru_third_product
// PADSTACK: linalg.batch_matmul {{.*}} ins(%{{.*}}, %{{.*}} : tensor<4x?x4xf32>, tensor<4x8x4xf32>)
// PADSTACK: linalg.batch_matmul {{.*}} ins(%{{.*}}, %{{.*}} : tensor<4x?x4xf32>, tensor<4x4x4xf32>)
// PADSTACK-NOT: linalg.batch_matmul
func.func @gru_third_product(%x: tensor<2x?x4xf32>, %h: tensor<2x?x4xf32>,
                             %w: tensor<2x12x4xf32>, %r: tensor<2x8x4xf32>,
                             %rn: tensor<2x4x4xf32>, %b: index)
    -> tensor<2x?x4xf32> {
  %zero = arith.constant 0.0 : f32
  %pe = tensor.empty(%b) : tensor<2x?x12xf32>
  %pz = linalg.fill ins(%zero : f32) outs(%pe : tensor<2x?x12xf32>) -> tensor<2x?x12xf32>
  %px = linalg.batch_matmul indexing_maps = [#x, #w, #c]
      ins(%x, %w : tensor<2x?x4xf32>, tensor<2x12x4xf32>)
      outs(%pz : tensor<2x?x12xf32>) -> tensor<2x?x12xf32>
  %px0 = tensor.extract_slice %px[0, 0, 0] [2, %b, 4] [1, 1, 1] : tensor<2x?x12xf32> to tensor<2x?x4xf32>
  %px1 = tensor.extract_slice %px[0, 0, 4] [2, %b, 4] [1, 1, 1] : tensor<2x?x12xf32> to tensor<2x?x4xf32>
  %pxn = tensor.extract_slice %px[0, 0, 8] [2, %b, 4] [1, 1, 1] : tensor<2x?x12xf32> to tensor<2x?x4xf32>
  %he = tensor.empty(%b) : tensor<2x?x8xf32>
  %hz = linalg.fill ins(%zero : f32) outs(%he : tensor<2x?x8xf32>) -> tensor<2x?x8xf32>
  %ph = linalg.batch_matmul indexing_maps = [#x, #w, #c]
      ins(%h, %r : tensor<2x?x4xf32>, tensor<2x8x4xf32>)
      outs(%hz : tensor<2x?x8xf32>) -> tensor<2x?x8xf32>
  %ph0 = tensor.extract_slice %ph[0, 0, 0] [2, %b, 4] [1, 1, 1] : tensor<2x?x8xf32> to tensor<2x?x4xf32>
  %ph1 = tensor.extract_slice %ph[0, 0, 4] [2, %b, 4] [1, 1, 1] : tensor<2x?x8xf32> to tensor<2x?x4xf32>
  %e = tensor.empty(%b) : tensor<2x?x4xf32>
  %rh = linalg.generic {indexing_maps = [#id, #id, #id, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%px0, %ph0, %h : tensor<2x?x4xf32>, tensor<2x?x4xf32>, tensor<2x?x4xf32>)
      outs(%e : tensor<2x?x4xf32>) {
  ^bb0(%a: f32, %c: f32, %s: f32, %o: f32):
    %sum = arith.addf %a, %c : f32
    %gate = math.tanh %sum : f32
    %m = arith.mulf %gate, %s : f32
    linalg.yield %m : f32
  } -> tensor<2x?x4xf32>
  %ne = tensor.empty(%b) : tensor<2x?x4xf32>
  %nz = linalg.fill ins(%zero : f32) outs(%ne : tensor<2x?x4xf32>) -> tensor<2x?x4xf32>
  %pn = linalg.batch_matmul indexing_maps = [#x, #w, #c]
      ins(%rh, %rn : tensor<2x?x4xf32>, tensor<2x4x4xf32>)
      outs(%nz : tensor<2x?x4xf32>) -> tensor<2x?x4xf32>
  %zn = linalg.generic {indexing_maps = [#id, #id, #id, #id, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%px1, %ph1, %pxn, %pn : tensor<2x?x4xf32>, tensor<2x?x4xf32>, tensor<2x?x4xf32>, tensor<2x?x4xf32>)
      outs(%e : tensor<2x?x4xf32>) {
  ^bb0(%a: f32, %c: f32, %n: f32, %q: f32, %o: f32):
    %s = arith.addf %a, %c : f32
    %nsum = arith.addf %n, %q : f32
    %t = math.tanh %nsum : f32
    %u = arith.mulf %s, %t : f32
    linalg.yield %u : f32
  } -> tensor<2x?x4xf32>
  return %zn : tensor<2x?x4xf32>
}
