// RUN: ober-run %s --grad-check --grad-tolerance=2e-3 | FileCheck %s
// Rules through a change of precision, checked with f32 finite differences.

// CHECK: grad-check @cast_: max error {{.*}} OK
func.func @cast_(%a: tensor<3xf32> {ober.param = "a"}, %c: tensor<3xf64>) -> tensor<f64> {
  %y = ober.cast %a : tensor<3xf32> to tensor<3xf64>
  %w = ober.mul %y, %c : tensor<3xf64>
  %l = ober.reduce_sum %w {axes = array<i64: 0>, keepdims = false} : (tensor<3xf64>) -> tensor<f64>
  return %l : tensor<f64>
}

// CHECK: grad-check @mlp_f32: max error {{.*}} OK
func.func @mlp_f32(%x: tensor<4x5xf32>, %w: tensor<5x3xf32> {ober.param = "w"}, %b: tensor<3xf32> {ober.param = "b"}, %t: tensor<4xi64>) -> tensor<f32> {
  %h = ober.matmul %x, %w : (tensor<4x5xf32>, tensor<5x3xf32>) -> tensor<4x3xf32>
  %z = ober.add %h, %b : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  %l = ober.cross_entropy %z, %t {reduction = #ober.reduction<mean>, label_smoothing = 0.1 : f64} : (tensor<4x3xf32>, tensor<4xi64>) -> tensor<f32>
  return %l : tensor<f32>
}
