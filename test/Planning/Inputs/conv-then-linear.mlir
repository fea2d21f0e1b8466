// A 3x3 convolution of 64 channels over 8 images of 56x56, then a linear
// layer over the channels at each position (tensor parallelism splits it,
// not the convolution).
func.func @main(%x: tensor<8x64x56x56xf32>, %w1: tensor<64x64x3x3xf32> {ober.param = "w1"}, %w2: tensor<64x64xf32> {ober.param = "w2"}) -> tensor<8x56x56x64xf32> {
  %0 = ober.conv %x, %w1 {strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, groups = 1 : i64} : (tensor<8x64x56x56xf32>, tensor<64x64x3x3xf32>) -> tensor<8x64x56x56xf32>
  %1 = ober.relu %0 : tensor<8x64x56x56xf32>
  %2 = ober.transpose %1 {permutation = array<i64: 0, 2, 3, 1>} : tensor<8x64x56x56xf32> -> tensor<8x56x56x64xf32>
  %3 = ober.matmul %2, %w2 : (tensor<8x56x56x64xf32>, tensor<64x64xf32>) -> tensor<8x56x56x64xf32>
  return %3 : tensor<8x56x56x64xf32>
}
