// A parameter far larger than any machine's memory: 2^40 elements, 8 TiB
// in the interpreter.
func.func @big(%x: tensor<4xf32>, %w: tensor<1024x1073741824xf32> {ober.param = "w"}) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
