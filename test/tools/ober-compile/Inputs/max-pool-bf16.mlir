// A 2x2 max pool in bf16 (the loop's running maximum stays in a register).
func.func @main(%x: tensor<1x1x4x4xbf16>) -> tensor<1x1x2x2xbf16> {
  %0 = ober.max_pool %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, ceil_mode = false} : (tensor<1x1x4x4xbf16>) -> tensor<1x1x2x2xbf16>
  return %0 : tensor<1x1x2x2xbf16>
}
