// Two 3x3 convolutions of 64 channels over 8 images of 56x56 (resnet's
// first stage) with a ReLU between: the step's time is the convolutions'.
func.func @main(%x: tensor<8x64x56x56xf32>, %w1: tensor<64x64x3x3xf32> {ober.param = "w1"}, %w2: tensor<64x64x3x3xf32> {ober.param = "w2"}) -> tensor<8x64x56x56xf32> {
  %0 = ober.conv %x, %w1 {strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, groups = 1 : i64} : (tensor<8x64x56x56xf32>, tensor<64x64x3x3xf32>) -> tensor<8x64x56x56xf32>
  %1 = ober.relu %0 : tensor<8x64x56x56xf32>
  %2 = ober.conv %1, %w2 {strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, groups = 1 : i64} : (tensor<8x64x56x56xf32>, tensor<64x64x3x3xf32>) -> tensor<8x64x56x56xf32>
  return %2 : tensor<8x64x56x56xf32>
}
