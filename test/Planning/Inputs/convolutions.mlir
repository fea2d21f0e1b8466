// A convolution (two groups of 2 input and 3 output channels, a 3x3
// kernel at stride 2 over 8x8 padded at the start), its weight gradient
// and its data gradient: each gathers [2, 18, 32] columns when lowered to
// products (groups, channels of a group times kernel positions, images
// times output positions).
func.func @conv(%x: tensor<2x4x8x8xf32>, %w: tensor<6x2x3x3xf32>) -> tensor<2x6x4x4xf32> {
  %0 = ober.conv %x, %w {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 0, 0>, dilations = array<i64: 1, 1>, groups = 2 : i64} : (tensor<2x4x8x8xf32>, tensor<6x2x3x3xf32>) -> tensor<2x6x4x4xf32>
  return %0 : tensor<2x6x4x4xf32>
}

func.func @weight_grad(%x: tensor<2x4x8x8xf32>, %gy: tensor<2x6x4x4xf32>) -> tensor<6x2x3x3xf32> {
  %0 = ober.conv_weight_grad %x, %gy {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 0, 0>, dilations = array<i64: 1, 1>, groups = 2 : i64} : (tensor<2x4x8x8xf32>, tensor<2x6x4x4xf32>) -> tensor<6x2x3x3xf32>
  return %0 : tensor<6x2x3x3xf32>
}

func.func @data_grad(%gy: tensor<2x6x4x4xf32>, %w: tensor<6x2x3x3xf32>) -> tensor<2x4x8x8xf32> {
  %0 = ober.conv_transpose %gy, %w {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 0, 0>, dilations = array<i64: 1, 1>, output_padding = array<i64: 0, 0>, groups = 2 : i64} : (tensor<2x6x4x4xf32>, tensor<6x2x3x3xf32>) -> tensor<2x4x8x8xf32>
  return %0 : tensor<2x4x8x8xf32>
}
