// An uninitialised [n, n, n] tensor from n elements: for n = 3·10^6 its
// size in bytes (1.08·10^20) wraps around 64 bits (test/Runner/sizes.test).
func.func @forward(%x: tensor<?xf32>) -> tensor<?x?x?xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?xf32>
  %e = tensor.empty(%n, %n, %n) : tensor<?x?x?xf32>
  return %e : tensor<?x?x?xf32>
}
