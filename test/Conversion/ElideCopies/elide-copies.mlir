// RUN: lstm-opt %s --lstm-elide-copies -split-input-file | FileCheck %s

#id = affine_map<(d0, d1) -> (d0, d1)>

// Two parts computed by one op into temporaries, then copied into disjoint
// columns of one buffer (what bufferization makes of a chain of
// tensor.insert_slice): the op writes the columns, the copies are gone.
// CHECK-LABEL: func.func @chain
// CHECK-SAME: (%[[A:.*]]: memref<4x8xf32>, %[[D:.*]]: memref<4x16xf32>)
// CHECK-DAG: %[[V0:.*]] = memref.subview %[[D]][0, 0] [4, 8] [1, 1]
// CHECK-DAG: %[[V1:.*]] = memref.subview %[[D]][0, 8] [4, 8] [1, 1]
// CHECK: linalg.generic {{.*}} ins(%[[A]] : memref<4x8xf32>) outs(%[[V0]], %[[V1]] :
// CHECK-NOT: memref.copy
// CHECK-NOT: memref.alloc
func.func @chain(%a: memref<4x8xf32>, %d: memref<4x16xf32>) {
  %t0 = memref.alloc() : memref<4x8xf32>
  %t1 = memref.alloc() : memref<4x8xf32>
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<4x8xf32>) outs(%t0, %t1 : memref<4x8xf32>, memref<4x8xf32>) {
  ^bb0(%x: f32, %o0: f32, %o1: f32):
    %m = arith.mulf %x, %x : f32
    linalg.yield %x, %m : f32, f32
  }
  %v0 = memref.subview %d[0, 0] [4, 8] [1, 1] : memref<4x16xf32> to memref<4x8xf32, strided<[16, 1]>>
  memref.copy %t0, %v0 : memref<4x8xf32> to memref<4x8xf32, strided<[16, 1]>>
  %v1 = memref.subview %d[0, 8] [4, 8] [1, 1] : memref<4x16xf32> to memref<4x8xf32, strided<[16, 1], offset: 8>>
  memref.copy %t1, %v1 : memref<4x8xf32> to memref<4x8xf32, strided<[16, 1], offset: 8>>
  return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// The same into a store's slot whose view (and the extent it takes) is made
// after the producer, as a backward diagonal's dG is: the view and its
// extent are made again before the producer, and the second part's view,
// computed alike from the first's view chain, counts as disjoint from it.
// CHECK-LABEL: func.func @into_slot
// CHECK-SAME: (%[[A:.*]]: memref<?x8xf32>, %[[S:.*]]: memref<?x?x16xf32>, %[[T:.*]]: index)
// CHECK: %[[N0:.*]] = memref.dim %[[S]], %c1
// CHECK: %[[SLOT0:.*]] = memref.subview %[[S]][%[[T]], 0, 0] [1, %[[N0]], 16]
// CHECK: %[[V0:.*]] = memref.subview %[[SLOT0]][0, 0]
// CHECK: %[[N1:.*]] = memref.dim %[[S]], %c1
// CHECK: %[[SLOT1:.*]] = memref.subview %[[S]][%[[T]], 0, 0] [1, %[[N1]], 16]
// CHECK: %[[V1:.*]] = memref.subview %[[SLOT1]][0, 8]
// CHECK: linalg.generic {{.*}} ins(%[[A]] : memref<?x8xf32>) outs(%[[V0]], %[[V1]] :
// CHECK-NOT: memref.copy
// CHECK-NOT: memref.alloc
func.func @into_slot(%a: memref<?x8xf32>, %s: memref<?x?x16xf32>, %t: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %b = memref.dim %a, %c0 : memref<?x8xf32>
  %t0 = memref.alloc(%b) : memref<?x8xf32>
  %t1 = memref.alloc(%b) : memref<?x8xf32>
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<?x8xf32>) outs(%t0, %t1 : memref<?x8xf32>, memref<?x8xf32>) {
  ^bb0(%x: f32, %o0: f32, %o1: f32):
    %m = arith.mulf %x, %x : f32
    linalg.yield %x, %m : f32, f32
  }
  %n = memref.dim %s, %c1 : memref<?x?x16xf32>
  %slot = memref.subview %s[%t, 0, 0] [1, %n, 16] [1, 1, 1] : memref<?x?x16xf32> to memref<?x16xf32, strided<[16, 1], offset: ?>>
  %v0 = memref.subview %slot[0, 0] [%b, 8] [1, 1] : memref<?x16xf32, strided<[16, 1], offset: ?>> to memref<?x8xf32, strided<[16, 1], offset: ?>>
  memref.copy %t0, %v0 : memref<?x8xf32> to memref<?x8xf32, strided<[16, 1], offset: ?>>
  %v1 = memref.subview %slot[0, 8] [%b, 8] [1, 1] : memref<?x16xf32, strided<[16, 1], offset: ?>> to memref<?x8xf32, strided<[16, 1], offset: ?>>
  memref.copy %t1, %v1 : memref<?x8xf32> to memref<?x8xf32, strided<[16, 1], offset: ?>>
  return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// The producer reads the destination: writing it early would change its
// input. The copy stays.
// CHECK-LABEL: func.func @reads_destination
// CHECK: memref.copy
func.func @reads_destination(%d: memref<4x8xf32>) {
  %t = memref.alloc() : memref<4x8xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%d : memref<4x8xf32>) outs(%t : memref<4x8xf32>) {
  ^bb0(%x: f32, %o: f32):
    %m = arith.mulf %x, %x : f32
    linalg.yield %m : f32
  }
  memref.copy %t, %d : memref<4x8xf32> to memref<4x8xf32>
  return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// One part written in place, copied onto itself, the other computed into a
// temporary and copied into the next part (what bufferization makes of a
// generic computing into two slices of one empty tensor, inserted back in
// a chain): the self-copy reads and writes only the first part, so the
// generic writes the second part too.
// CHECK-LABEL: func.func @after_self_copy
// CHECK-SAME: (%[[A:.*]]: memref<4x8xf32>)
// CHECK: %[[D:.*]] = memref.alloc() : memref<4x16xf32>
// CHECK-DAG: %[[V0:.*]] = memref.subview %[[D]][0, 0] [4, 8] [1, 1]
// CHECK-DAG: %[[V1:.*]] = memref.subview %[[D]][0, 8] [4, 8] [1, 1]
// CHECK: linalg.generic {{.*}} ins(%[[A]] : memref<4x8xf32>) outs(%[[V0]], %[[V1]] :
// CHECK: memref.copy %{{.*}}, %{{.*}} : memref<4x8xf32, strided<[16, 1]>> to memref<4x8xf32, strided<[16, 1]>>
// CHECK-NOT: memref.copy
// CHECK: return %[[D]]
func.func @after_self_copy(%a: memref<4x8xf32>) -> memref<4x16xf32> {
  %d = memref.alloc() : memref<4x16xf32>
  %v0 = memref.subview %d[0, 0] [4, 8] [1, 1] : memref<4x16xf32> to memref<4x8xf32, strided<[16, 1]>>
  %t = memref.alloc() : memref<4x8xf32>
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<4x8xf32>) outs(%v0, %t : memref<4x8xf32, strided<[16, 1]>>, memref<4x8xf32>) {
  ^bb0(%x: f32, %o0: f32, %o1: f32):
    %m = arith.mulf %x, %x : f32
    linalg.yield %x, %m : f32, f32
  }
  %w0 = memref.subview %d[0, 0] [4, 8] [1, 1] : memref<4x16xf32> to memref<4x8xf32, strided<[16, 1]>>
  memref.copy %v0, %w0 : memref<4x8xf32, strided<[16, 1]>> to memref<4x8xf32, strided<[16, 1]>>
  %w1 = memref.subview %d[0, 8] [4, 8] [1, 1] : memref<4x16xf32> to memref<4x8xf32, strided<[16, 1], offset: 8>>
  memref.copy %t, %w1 : memref<4x8xf32> to memref<4x8xf32, strided<[16, 1], offset: 8>>
  return %d : memref<4x16xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// A copy in between reads the part the temporary is copied into (into
// another part): writing that part at the producer would change what it
// reads. The copy stays.
// CHECK-LABEL: func.func @reads_part_between
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : memref<4x8xf32>)
// CHECK: memref.copy %{{.*}}, %{{.*}} : memref<4x8xf32, strided<[16, 1], offset: 8>> to memref<4x8xf32, strided<[16, 1]>>
// CHECK: memref.copy %{{.*}}, %{{.*}} : memref<4x8xf32> to memref<4x8xf32, strided<[16, 1], offset: 8>>
func.func @reads_part_between(%a: memref<4x8xf32>, %d: memref<4x16xf32>) {
  %t = memref.alloc() : memref<4x8xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<4x8xf32>) outs(%t : memref<4x8xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  }
  %w0 = memref.subview %d[0, 0] [4, 8] [1, 1] : memref<4x16xf32> to memref<4x8xf32, strided<[16, 1]>>
  %r1 = memref.subview %d[0, 8] [4, 8] [1, 1] : memref<4x16xf32> to memref<4x8xf32, strided<[16, 1], offset: 8>>
  memref.copy %r1, %w0 : memref<4x8xf32, strided<[16, 1], offset: 8>> to memref<4x8xf32, strided<[16, 1]>>
  %w1 = memref.subview %d[0, 8] [4, 8] [1, 1] : memref<4x16xf32> to memref<4x8xf32, strided<[16, 1], offset: 8>>
  memref.copy %t, %w1 : memref<4x8xf32> to memref<4x8xf32, strided<[16, 1], offset: 8>>
  return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// Something between the producer and the copy writes the destination
// (overlapping columns): the copy stays.
// CHECK-LABEL: func.func @written_between
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : memref<4x8xf32>)
// CHECK: memref.copy %{{.*}}, %{{.*}} : memref<4x8xf32> to memref<4x8xf32, strided<[16, 1], offset: 4>>
// CHECK: memref.copy %{{.*}}, %{{.*}} : memref<4x8xf32> to memref<4x8xf32, strided<[16, 1]>>
func.func @written_between(%a: memref<4x8xf32>, %b: memref<4x8xf32>, %d: memref<4x16xf32>) {
  %t = memref.alloc() : memref<4x8xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<4x8xf32>) outs(%t : memref<4x8xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  }
  %w = memref.subview %d[0, 4] [4, 8] [1, 1] : memref<4x16xf32> to memref<4x8xf32, strided<[16, 1], offset: 4>>
  memref.copy %b, %w : memref<4x8xf32> to memref<4x8xf32, strided<[16, 1], offset: 4>>
  %v = memref.subview %d[0, 0] [4, 8] [1, 1] : memref<4x16xf32> to memref<4x8xf32, strided<[16, 1]>>
  memref.copy %t, %v : memref<4x8xf32> to memref<4x8xf32, strided<[16, 1]>>
  return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// The temporary is copied twice: the first destination takes its place,
// the second copy copies from there.
// CHECK-LABEL: func.func @other_reader
// CHECK-SAME: (%[[A:.*]]: memref<4x8xf32>, %[[D:.*]]: memref<4x8xf32>, %[[E:.*]]: memref<4x8xf32>)
// CHECK: linalg.generic {{.*}} outs(%[[D]] : memref<4x8xf32>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: linalg.yield
// CHECK-NEXT: }
// CHECK-NEXT: memref.copy %[[D]], %[[E]] :
// CHECK-NEXT: return
func.func @other_reader(%a: memref<4x8xf32>, %d: memref<4x8xf32>, %e: memref<4x8xf32>) {
  %t = memref.alloc() : memref<4x8xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<4x8xf32>) outs(%t : memref<4x8xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  }
  memref.copy %t, %d : memref<4x8xf32> to memref<4x8xf32>
  memref.copy %t, %e : memref<4x8xf32> to memref<4x8xf32>
  return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// A whole temporary, written in parts by one op and copied twice: the
// first copy's destination takes its place (the second copy now copies from
// there), as a backward step's dG becomes a row block of its output sequence.
// CHECK-LABEL: func.func @temporary
// CHECK-SAME: (%[[A:.*]]: memref<4x8xf32>, %[[SEQ:.*]]: memref<3x4x16xf32>, %[[T:.*]]: index, %[[OUT:.*]]: memref<4x16xf32>)
// CHECK-NOT: memref.alloc
// CHECK-DAG: %[[P0:.*]] = memref.subview %[[OUT]][0, 0] [4, 8] [1, 1]
// CHECK-DAG: %[[P1:.*]] = memref.subview %[[OUT]][0, 8] [4, 8] [1, 1]
// CHECK: linalg.generic {{.*}} outs(%[[P0]], %[[P1]] :
// CHECK: %[[ROW:.*]] = memref.subview %[[SEQ]][%[[T]], 0, 0] [1, 4, 16] [1, 1, 1]
// CHECK-NEXT: memref.copy %[[OUT]], %[[ROW]]
// CHECK-NOT: memref.copy
func.func @temporary(%a: memref<4x8xf32>, %seq: memref<3x4x16xf32>, %t: index, %out: memref<4x16xf32>) {
  %tmp = memref.alloc() : memref<4x16xf32>
  %p0 = memref.subview %tmp[0, 0] [4, 8] [1, 1] : memref<4x16xf32> to memref<4x8xf32, strided<[16, 1]>>
  %p1 = memref.subview %tmp[0, 8] [4, 8] [1, 1] : memref<4x16xf32> to memref<4x8xf32, strided<[16, 1], offset: 8>>
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<4x8xf32>) outs(%p0, %p1 : memref<4x8xf32, strided<[16, 1]>>, memref<4x8xf32, strided<[16, 1], offset: 8>>) {
  ^bb0(%x: f32, %o0: f32, %o1: f32):
    %m = arith.mulf %x, %x : f32
    linalg.yield %x, %m : f32, f32
  }
  memref.copy %tmp, %out : memref<4x16xf32> to memref<4x16xf32>
  %row = memref.subview %seq[%t, 0, 0] [1, 4, 16] [1, 1, 1] : memref<3x4x16xf32> to memref<4x16xf32, strided<[16, 1], offset: ?>>
  memref.copy %tmp, %row : memref<4x16xf32> to memref<4x16xf32, strided<[16, 1], offset: ?>>
  return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// A recurrent step: the producer reads row t of a stack and its result is
// copied into row t + 1 (offsets that differ by a constant, one row each):
// the rows are disjoint, the producer writes row t + 1.
// CHECK-LABEL: func.func @next_row
// CHECK-SAME: (%[[S:.*]]: memref<5x4x8xf32>, %[[T:.*]]: index)
// CHECK: %[[NEXT:.*]] = arith.addi %[[T]]
// CHECK-DAG: %[[OLD:.*]] = memref.subview %[[S]][%[[T]], 0, 0]
// CHECK-DAG: %[[NEW:.*]] = memref.subview %[[S]][%[[NEXT]], 0, 0]
// CHECK: linalg.generic {{.*}} ins(%[[OLD]] : {{.*}}) outs(%[[NEW]] :
// CHECK-NOT: memref.copy
func.func @next_row(%s: memref<5x4x8xf32>, %t: index) {
  %c1 = arith.constant 1 : index
  %next = arith.addi %t, %c1 : index
  %old = memref.subview %s[%t, 0, 0] [1, 4, 8] [1, 1, 1] : memref<5x4x8xf32> to memref<4x8xf32, strided<[8, 1], offset: ?>>
  %tmp = memref.alloc() : memref<4x8xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%old : memref<4x8xf32, strided<[8, 1], offset: ?>>) outs(%tmp : memref<4x8xf32>) {
  ^bb0(%x: f32, %o: f32):
    %m = arith.mulf %x, %x : f32
    linalg.yield %m : f32
  }
  %new = memref.subview %s[%next, 0, 0] [1, 4, 8] [1, 1, 1] : memref<5x4x8xf32> to memref<4x8xf32, strided<[8, 1], offset: ?>>
  memref.copy %tmp, %new : memref<4x8xf32> to memref<4x8xf32, strided<[8, 1], offset: ?>>
  return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// Rows t and t + 1 when the producer reads two rows, t + 1 among them: the
// copy stays.
// CHECK-LABEL: func.func @overlapping_rows
// CHECK: memref.copy
func.func @overlapping_rows(%s: memref<5x4x8xf32>, %t: index) {
  %c1 = arith.constant 1 : index
  %next = arith.addi %t, %c1 : index
  %old = memref.subview %s[%t, 0, 0] [2, 4, 8] [1, 1, 1] : memref<5x4x8xf32> to memref<2x4x8xf32, strided<[32, 8, 1], offset: ?>>
  %row = memref.subview %old[1, 0, 0] [1, 4, 8] [1, 1, 1] : memref<2x4x8xf32, strided<[32, 8, 1], offset: ?>> to memref<4x8xf32, strided<[8, 1], offset: ?>>
  %tmp = memref.alloc() : memref<4x8xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%row : memref<4x8xf32, strided<[8, 1], offset: ?>>) outs(%tmp : memref<4x8xf32>) {
  ^bb0(%x: f32, %o: f32):
    %m = arith.mulf %x, %x : f32
    linalg.yield %m : f32
  }
  %new = memref.subview %s[%next, 0, 0] [1, 4, 8] [1, 1, 1] : memref<5x4x8xf32> to memref<4x8xf32, strided<[8, 1], offset: ?>>
  memref.copy %tmp, %new : memref<4x8xf32> to memref<4x8xf32, strided<[8, 1], offset: ?>>
  return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// A whole temporary copied into a column block of a wider buffer and read
// after the copy by a product in either branch of an `scf.if` (a GRU
// backward step's dn: the dG block of the weight gradients and the operand
// of the product through R_n): the block takes the temporary's place, the
// products read it there.
// CHECK-LABEL: func.func @nested_readers
// CHECK-SAME: (%[[A:.*]]: memref<4x8xf32>, %[[W:.*]]: memref<8x8xf32>, %[[G:.*]]: memref<4x24xf32>, %[[C:.*]]: i1, %[[O:.*]]: memref<4x8xf32>)
// CHECK-NOT: memref.alloc
// CHECK: %[[BLOCK:.*]] = memref.subview %[[G]][0, 16] [4, 8] [1, 1]
// CHECK: linalg.generic {{.*}} outs(%[[BLOCK]] :
// CHECK-NOT: memref.copy
// CHECK: scf.if %[[C]]
// CHECK-NEXT: linalg.matmul ins(%[[BLOCK]], %[[W]] :
// CHECK: else
// CHECK-NEXT: linalg.matmul ins(%[[BLOCK]], %[[W]] :
func.func @nested_readers(%a: memref<4x8xf32>, %w: memref<8x8xf32>, %g: memref<4x24xf32>, %c: i1, %o: memref<4x8xf32>) {
  %tmp = memref.alloc() : memref<4x8xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<4x8xf32>) outs(%tmp : memref<4x8xf32>) {
  ^bb0(%x: f32, %out: f32):
    %m = arith.mulf %x, %x : f32
    linalg.yield %m : f32
  }
  %block = memref.subview %g[0, 16] [4, 8] [1, 1] : memref<4x24xf32> to memref<4x8xf32, strided<[24, 1], offset: 16>>
  memref.copy %tmp, %block : memref<4x8xf32> to memref<4x8xf32, strided<[24, 1], offset: 16>>
  scf.if %c {
    linalg.matmul ins(%tmp, %w : memref<4x8xf32>, memref<8x8xf32>) outs(%o : memref<4x8xf32>)
  } else {
    linalg.matmul ins(%tmp, %w : memref<4x8xf32>, memref<8x8xf32>) outs(%o : memref<4x8xf32>)
  }
  return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// A nested use that writes the temporary (under a condition, after the
// copy): the copy moved the value before that write, so it stays.
// CHECK-LABEL: func.func @nested_writer
// CHECK: memref.alloc
// CHECK: memref.copy
func.func @nested_writer(%a: memref<4x8xf32>, %w: memref<8x8xf32>, %g: memref<4x24xf32>, %c: i1) {
  %tmp = memref.alloc() : memref<4x8xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<4x8xf32>) outs(%tmp : memref<4x8xf32>) {
  ^bb0(%x: f32, %out: f32):
    %m = arith.mulf %x, %x : f32
    linalg.yield %m : f32
  }
  %block = memref.subview %g[0, 16] [4, 8] [1, 1] : memref<4x24xf32> to memref<4x8xf32, strided<[24, 1], offset: 16>>
  memref.copy %tmp, %block : memref<4x8xf32> to memref<4x8xf32, strided<[24, 1], offset: 16>>
  scf.if %c {
    linalg.matmul ins(%a, %w : memref<4x8xf32>, memref<8x8xf32>) outs(%tmp : memref<4x8xf32>)
  }
  return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// A nested reader whose op also touches the destination (the branch zeroes
// the block before the product reads the temporary, which must still hold
// the copied value): the copy stays.
// CHECK-LABEL: func.func @nested_touches_destination
// CHECK: memref.alloc
// CHECK: memref.copy
func.func @nested_touches_destination(%a: memref<4x8xf32>, %w: memref<8x8xf32>, %g: memref<4x24xf32>, %c: i1, %o: memref<4x8xf32>) {
  %tmp = memref.alloc() : memref<4x8xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<4x8xf32>) outs(%tmp : memref<4x8xf32>) {
  ^bb0(%x: f32, %out: f32):
    %m = arith.mulf %x, %x : f32
    linalg.yield %m : f32
  }
  %block = memref.subview %g[0, 16] [4, 8] [1, 1] : memref<4x24xf32> to memref<4x8xf32, strided<[24, 1], offset: 16>>
  memref.copy %tmp, %block : memref<4x8xf32> to memref<4x8xf32, strided<[24, 1], offset: 16>>
  scf.if %c {
    %zero = arith.constant 0.0 : f32
    linalg.fill ins(%zero : f32) outs(%block : memref<4x8xf32, strided<[24, 1], offset: 16>>)
    linalg.matmul ins(%tmp, %w : memref<4x8xf32>, memref<8x8xf32>) outs(%o : memref<4x8xf32>)
  }
  return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// The temporary's extent read by a guard (a split product taken from a
// batch size on): it reads the destination's extent instead, and the copy
// goes (a single-layer GRU's backward step).
// CHECK-LABEL: func.func @extent_read
// CHECK-SAME: (%[[A:.*]]: memref<?x8xf32>, %[[W:.*]]: memref<8x8xf32>, %[[G:.*]]: memref<?x24xf32>, %[[O:.*]]: memref<?x8xf32>)
// CHECK-NOT: memref.alloc
// CHECK: %[[BLOCK:.*]] = memref.subview %[[G]][0, 16] [%{{.*}}, 8] [1, 1]
// CHECK: linalg.generic {{.*}} outs(%[[BLOCK]] :
// CHECK-NOT: memref.copy
// CHECK: memref.dim %[[BLOCK]], %{{.*}}
// CHECK: scf.if
// CHECK-NEXT: linalg.matmul ins(%[[BLOCK]], %[[W]] :
func.func @extent_read(%a: memref<?x8xf32>, %w: memref<8x8xf32>, %g: memref<?x24xf32>, %o: memref<?x8xf32>) {
  %c0 = arith.constant 0 : index
  %c128 = arith.constant 128 : index
  %n = memref.dim %a, %c0 : memref<?x8xf32>
  %tmp = memref.alloc(%n) : memref<?x8xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<?x8xf32>) outs(%tmp : memref<?x8xf32>) {
  ^bb0(%x: f32, %out: f32):
    %m = arith.mulf %x, %x : f32
    linalg.yield %m : f32
  }
  %block = memref.subview %g[0, 16] [%n, 8] [1, 1] : memref<?x24xf32> to memref<?x8xf32, strided<[24, 1], offset: 16>>
  memref.copy %tmp, %block : memref<?x8xf32> to memref<?x8xf32, strided<[24, 1], offset: 16>>
  %rows = memref.dim %tmp, %c0 : memref<?x8xf32>
  %big = arith.cmpi sge, %rows, %c128 : index
  scf.if %big {
    linalg.matmul ins(%tmp, %w : memref<?x8xf32>, memref<8x8xf32>) outs(%o : memref<?x8xf32>)
  }
  return
}
