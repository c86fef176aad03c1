// The functions lstm-approximate-math replaces, each applied to one f32
// vector (check_accuracy.py runs it with --approximate-math on and off).
func.func @forward(%x: tensor<?xf32>) -> (tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>) {
  %t = math.tanh %x : tensor<?xf32>
  %e = math.exp %x : tensor<?xf32>
  %m = math.expm1 %x : tensor<?xf32>
  %l = math.log %x : tensor<?xf32>
  %p = math.log1p %x : tensor<?xf32>
  // The sigmoid as the lowering of lstm.gate writes it: 1 / (1 + exp(-x)).
  %one = arith.constant 1.0 : f32
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?xf32>
  %ones = tensor.splat %one[%n] : tensor<?xf32>
  %neg = arith.negf %x : tensor<?xf32>
  %en = math.exp %neg : tensor<?xf32>
  %d = arith.addf %ones, %en : tensor<?xf32>
  %s = arith.divf %ones, %d : tensor<?xf32>
  return %t, %e, %m, %l, %p, %s : tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>
}
