// RUN: ober-opt %s --convert-ober-to-linalg --verify-diagnostics

// An op without a lowering yet is named, with the families that are.
func.func @conv(%x: tensor<1x1x4x4xf32>, %w: tensor<1x1x3x3xf32>) -> tensor<1x1x2x2xf32> {
  // expected-error @+1 {{convert-ober-to-linalg: no lowering for 'ober.conv' with these types yet (lowered: elementwise ops}}
  %0 = ober.conv %x, %w {strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x1x4x4xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x2x2xf32>
  return %0 : tensor<1x1x2x2xf32>
}
