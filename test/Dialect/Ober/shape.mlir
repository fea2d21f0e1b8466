// RUN: ober-opt %s | ober-opt | FileCheck %s
// RUN: ober-opt %s -mlir-print-op-generic | ober-opt | FileCheck %s

// CHECK-LABEL: func @shape_ops
func.func @shape_ops(%x: tensor<2x3x4xf32>, %y: tensor<2x5x4xf32>, %d: tensor<?x4xf32>) -> tensor<24xf32> {
  // CHECK: %[[CST:.*]] = ober.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
  %c = ober.constant dense<[1.0, 2.0]> : tensor<2xf32>
  // CHECK: ober.constant dense<3> : tensor<2x2xi64>
  %ci = ober.constant dense<3> : tensor<2x2xi64>
  // CHECK: ober.iota {dimension = 1 : i64} : tensor<3x5xi64>
  %i = ober.iota {dimension = 1 : i64} : tensor<3x5xi64>
  // CHECK: ober.iota {dimension = 0 : i64} : tensor<7xf32>
  %if = ober.iota {dimension = 0 : i64} : tensor<7xf32>
  // CHECK: ober.reshape %{{.*}} : tensor<2x3x4xf32> to tensor<24xf32>
  %r = ober.reshape %x : tensor<2x3x4xf32> to tensor<24xf32>
  // CHECK: ober.reshape %{{.*}} : tensor<?x4xf32> to tensor<?x2x2xf32>
  %rd = ober.reshape %d : tensor<?x4xf32> to tensor<?x2x2xf32>
  // CHECK: ober.transpose %{{.*}} {permutation = array<i64: 2, 0, 1>} : tensor<2x3x4xf32> -> tensor<4x2x3xf32>
  %t = ober.transpose %x {permutation = array<i64: 2, 0, 1>} : tensor<2x3x4xf32> -> tensor<4x2x3xf32>
  // CHECK: ober.broadcast_to %{{.*}} : tensor<2xf32> to tensor<5x3x2xf32>
  %b = ober.broadcast_to %c : tensor<2xf32> to tensor<5x3x2xf32>
  // CHECK: ober.concat %{{.*}}, %{{.*}} {axis = 1 : i64} : (tensor<2x3x4xf32>, tensor<2x5x4xf32>) -> tensor<2x8x4xf32>
  %cat = ober.concat %x, %y {axis = 1 : i64} : (tensor<2x3x4xf32>, tensor<2x5x4xf32>) -> tensor<2x8x4xf32>
  // CHECK: ober.slice %{{.*}} {limits = array<i64: 2, 7, 4>, starts = array<i64: 0, 1, 0>, strides = array<i64: 1, 2, 1>} : tensor<2x8x4xf32> -> tensor<2x3x4xf32>
  %s = ober.slice %cat {starts = array<i64: 0, 1, 0>, limits = array<i64: 2, 7, 4>, strides = array<i64: 1, 2, 1>} : tensor<2x8x4xf32> -> tensor<2x3x4xf32>
  // CHECK: ober.slice %{{.*}} {limits = array<i64: 2, -1, 4>, starts = array<i64: 0, 7, 0>, strides = array<i64: 1, -3, 1>} : tensor<2x8x4xf32> -> tensor<2x3x4xf32>
  %sr = ober.slice %cat {starts = array<i64: 0, 7, 0>, limits = array<i64: 2, -1, 4>, strides = array<i64: 1, -3, 1>} : tensor<2x8x4xf32> -> tensor<2x3x4xf32>
  // CHECK: ober.split %{{.*}} {axis = 1 : i64, sizes = array<i64: 3, 5>} : (tensor<2x8x4xf32>) -> (tensor<2x3x4xf32>, tensor<2x5x4xf32>)
  %p:2 = ober.split %cat {axis = 1 : i64, sizes = array<i64: 3, 5>} : (tensor<2x8x4xf32>) -> (tensor<2x3x4xf32>, tensor<2x5x4xf32>)
  // CHECK: ober.pad %{{.*}} {high = array<i64: 0, 2, 1>, low = array<i64: 1, 0, 1>, mode = #ober.pad_mode<constant>, value = 0.000000e+00 : f64} : tensor<2x3x4xf32> -> tensor<3x5x6xf32>
  %pd = ober.pad %x {low = array<i64: 1, 0, 1>, high = array<i64: 0, 2, 1>, mode = #ober.pad_mode<constant>, value = 0.0 : f64} : tensor<2x3x4xf32> -> tensor<3x5x6xf32>
  // CHECK: mode = #ober.pad_mode<reflect>
  %pr = ober.pad %x {low = array<i64: 1, 2, 3>, high = array<i64: 1, 2, 3>, mode = #ober.pad_mode<reflect>, value = 0.0 : f64} : tensor<2x3x4xf32> -> tensor<4x7x10xf32>
  // CHECK: mode = #ober.pad_mode<edge>
  %pe = ober.pad %x {low = array<i64: 4, 0, 0>, high = array<i64: 0, 0, 0>, mode = #ober.pad_mode<edge>, value = 0.0 : f64} : tensor<2x3x4xf32> -> tensor<6x3x4xf32>
  return %r : tensor<24xf32>
}

// Parameters name their function arguments; the module names its weights.
// CHECK-LABEL: module attributes {ober.weights = "mlp.weights"}
module attributes {ober.weights = "mlp.weights"} {
  // CHECK: func @params(%{{.*}}: tensor<4xf32> {ober.param = "fc.weight"}, %{{.*}}: tensor<4xf32> {ober.param = "fc.bias"})
  func.func @params(%w: tensor<4xf32> {ober.param = "fc.weight"}, %b: tensor<4xf32> {ober.param = "fc.bias"}) -> tensor<4xf32> {
    %0 = ober.add %w, %b : tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}

// CHECK-LABEL: func @strings
// CHECK: ober.string_normalize %{{.*}} {case_change = "UPPER", case_sensitive = false, stopwords = ["monday"]} : tensor<1x6x!ober.string> -> tensor<1x4x!ober.string>
func.func @strings(%s: tensor<1x6x!ober.string>) -> tensor<1x4x!ober.string> {
  %0 = ober.string_normalize %s {case_change = "UPPER", case_sensitive = false, stopwords = ["monday"]} : tensor<1x6x!ober.string> -> tensor<1x4x!ober.string>
  return %0 : tensor<1x4x!ober.string>
}
