// RUN: ober-opt %s --pass-pipeline="builtin.module(test-ober-sharding-rules)" -o /dev/null | FileCheck %s

// Softmax's axis and the normalized dimensions are statistics: a split
// all-reduces that many values per slice and the result stays split.
// CHECK-LABEL: rules of @softmax
// CHECK-NEXT: ober.softmax: ([i, j]) -> ([i, j]) {i=4, j=8} statistics={j:2}
// CHECK-NEXT: ober.log_softmax: ([i, j]) -> ([i, j]) {i=4, j=8} statistics={i:2}
func.func @softmax(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %0 = ober.softmax %x {axis = 1 : i64} : tensor<4x8xf32>
  %1 = ober.log_softmax %x {axis = 0 : i64} : tensor<4x8xf32>
  return %0, %1 : tensor<4x8xf32>, tensor<4x8xf32>
}

// CHECK-LABEL: rules of @norms
// CHECK-NEXT: ober.layer_norm: ([i, j, k], [k], [k]) -> ([i, j, k]) {i=2, j=4, k=8} statistics={k:2}
// CHECK-NEXT: ober.rms_norm: ([i, j, k], [j, k]) -> ([i, j, k]) {i=2, j=4, k=8} statistics={j:1, k:1}
// CHECK-NEXT: ober.layer_norm: ([i, j, k]) -> ([i, j, k]) {i=2, j=4, k=8} statistics={k:2}
func.func @norms(%x: tensor<2x4x8xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>, %g2: tensor<4x8xf32>) -> (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>) {
  %0 = ober.layer_norm %x scale %g bias %b {axis = 2 : i64, epsilon = 1.0e-05 : f64} : (tensor<2x4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
  %1 = ober.rms_norm %x scale %g2 {axis = 1 : i64, epsilon = 1.0e-06 : f64} : (tensor<2x4x8xf32>, tensor<4x8xf32>) -> tensor<2x4x8xf32>
  %2 = ober.layer_norm %x {axis = 2 : i64, epsilon = 1.0e-05 : f64} : (tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %0, %1, %2 : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>
}

// Batch norm: channels are parallel with the per-channel operands (and
// running statistics); samples and positions are statistics in training.
// CHECK-LABEL: rules of @batch_norm
// CHECK-NEXT: ober.batch_norm_inference: ([i, j, k, l], [j], [j], [j], [j]) -> ([i, j, k, l]) {i=4, j=3, k=5, l=5}
// CHECK-NEXT: ober.batch_norm_training: ([i, j, k, l], [j], [j], [j], [j]) -> ([i, j, k, l], [j], [j]) {i=4, j=3, k=5, l=5} statistics={i:2, k:2, l:2}
func.func @batch_norm(%x: tensor<4x3x5x5xf32>, %c: tensor<3xf32>) -> (tensor<4x3x5x5xf32>, tensor<4x3x5x5xf32>) {
  %0 = ober.batch_norm_inference %x, %c, %c, %c, %c {epsilon = 1.0e-5 : f64} : (tensor<4x3x5x5xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<4x3x5x5xf32>
  %1:3 = ober.batch_norm_training %x, %c, %c, %c, %c {epsilon = 1.0e-5 : f64, momentum = 0.1 : f64} : (tensor<4x3x5x5xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<4x3x5x5xf32>, tensor<3xf32>, tensor<3xf32>)
  return %0, %1#0 : tensor<4x3x5x5xf32>, tensor<4x3x5x5xf32>
}
