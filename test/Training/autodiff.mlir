// RUN: ober-opt %s -ober-autodiff -split-input-file -verify-diagnostics | FileCheck %s

// The gradient function returns the loss, then one gradient per parameter,
// reading the forward values (no forward op is repeated).
// CHECK-LABEL: func.func @loss(
// CHECK-LABEL: func.func @loss_grad(
// CHECK-SAME: %[[X:[^:]*]]: tensor<4x3xf32>, %[[W:[^:]*]]: tensor<3x2xf32> {ober.param = "w"})
// CHECK-SAME: -> (tensor<f32>, tensor<3x2xf32>)
// CHECK: %[[Y:.*]] = ober.matmul %[[X]], %[[W]]
// CHECK: %[[T:.*]] = ober.tanh %[[Y]]
// CHECK: %[[L:.*]] = ober.reduce_sum %[[T]]
// CHECK-NOT: ober.tanh
// CHECK: ober.mul %[[T]], %[[T]]
// CHECK: %[[XT:.*]] = ober.transpose %[[X]] {permutation = array<i64: 1, 0>}
// CHECK: %[[DW:.*]] = ober.matmul %[[XT]], %{{.*}} : (tensor<3x4xf32>, tensor<4x2xf32>) -> tensor<3x2xf32>
// CHECK: return %[[L]], %[[DW]] : tensor<f32>, tensor<3x2xf32>
func.func @loss(%x: tensor<4x3xf32>, %w: tensor<3x2xf32> {ober.param = "w"}) -> tensor<f32> {
  %y = ober.matmul %x, %w : (tensor<4x3xf32>, tensor<3x2xf32>) -> tensor<4x2xf32>
  %t = ober.tanh %y : tensor<4x2xf32>
  %l = ober.reduce_sum %t {axes = array<i64: 0, 1>, keepdims = false} : (tensor<4x2xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// A parameter with no path to the loss gets zeros and is marked.
// CHECK-LABEL: func.func @unused_grad(
// CHECK-SAME: attributes {ober.no_gradient = array<i64: 1>}
func.func @unused(%a: tensor<3xf32> {ober.param = "a"}, %b: tensor<3xf32> {ober.param = "b"}) -> tensor<f32> {
  %l = ober.reduce_sum %a {axes = array<i64: 0>, keepdims = false} : (tensor<3xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// expected-error @+1 {{ober-autodiff: the first result must be a scalar float loss (tensor<f32> or alike), got 'tensor<3xf32>'}}
func.func @not_scalar(%a: tensor<3xf32> {ober.param = "a"}) -> tensor<3xf32> {
  return %a : tensor<3xf32>
}

// -----

func.func @no_rule(%x: tensor<1x1x4x4xf32> {ober.param = "x"}, %g: tensor<1x1x2x2xf32>) -> tensor<f32> {
  // expected-error @+1 {{ober-autodiff: no gradient rule for 'ober.max_pool_grad' (it is on the path from the parameters to the loss)}}
  %d = ober.max_pool_grad %x, %g {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, ceil_mode = false} : (tensor<1x1x4x4xf32>, tensor<1x1x2x2xf32>) -> tensor<1x1x4x4xf32>
  %l = ober.reduce_sum %d {axes = array<i64: 0, 1, 2, 3>, keepdims = false} : (tensor<1x1x4x4xf32>) -> tensor<f32>
  return %l : tensor<f32>
}
