// A result whose element count overflows 64 bits.
func.func @overflow(%x: tensor<4x1xf32>) -> tensor<4x4611686018427387904xf32> {
  %b = ober.broadcast_to %x : tensor<4x1xf32> to tensor<4x4611686018427387904xf32>
  return %b : tensor<4x4611686018427387904xf32>
}
