// The outer product of x with itself: an [n, n] result from n elements, a
// buffer that the compiled code allocates and that can be far larger than
// its input (test/Runner/sizes.test).
#row = affine_map<(i, j) -> (i)>
#col = affine_map<(i, j) -> (j)>
#all = affine_map<(i, j) -> (i, j)>
func.func @forward(%x: tensor<?xf32>) -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?xf32>
  %e = tensor.empty(%n, %n) : tensor<?x?xf32>
  %o = linalg.generic {indexing_maps = [#row, #col, #all], iterator_types = ["parallel", "parallel"]}
      ins(%x, %x : tensor<?xf32>, tensor<?xf32>) outs(%e : tensor<?x?xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %p = arith.mulf %a, %b : f32
    linalg.yield %p : f32
  } -> tensor<?x?xf32>
  return %o : tensor<?x?xf32>
}
