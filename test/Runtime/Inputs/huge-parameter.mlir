// The model of executable-memory.test: a 4 TB parameter.
func.func @main(%x: tensor<2x1000000xf32>, %w: tensor<1000000x1000000xf32> {ober.param = "w"}) -> tensor<2x1000000xf32> {
  %y = ober.matmul %x, %w : (tensor<2x1000000xf32>, tensor<1000000x1000000xf32>) -> tensor<2x1000000xf32>
  return %y : tensor<2x1000000xf32>
}
