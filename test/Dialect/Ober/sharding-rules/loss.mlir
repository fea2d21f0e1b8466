// RUN: ober-opt %s --pass-pipeline="builtin.module(test-ober-sharding-rules)" -o /dev/null | FileCheck %s

// Cross-entropy over the last dimension: the samples (tokens) are parallel
// per sample and sums otherwise (a mean divides by the parts; a mean that
// ignores targets has a global count, so they need replication); the
// classes are statistics (largest logit, sum of exponentials, target logit,
// and with label smoothing the sum of logits).
// CHECK-LABEL: rules of @cross_entropy
// CHECK-NEXT: ober.cross_entropy: ([i, j, k], [i, j]) -> ([]) {i=2, j=4, k=10} reduction={i:sum/mean, j:sum/mean} statistics={k:3}
// CHECK-NEXT: ober.cross_entropy: ([i, j, k], [i, j]) -> ([i, j]) {i=2, j=4, k=10} statistics={k:3}
// CHECK-NEXT: ober.cross_entropy: ([i, j, k], [i, j]) -> ([]) {i=2, j=4, k=10} reduction={i:sum, j:sum} statistics={k:4}
// CHECK-NEXT: ober.cross_entropy: ([i, j, k], [i, j]) -> ([]) {i=2, j=4, k=10} statistics={k:3} replication={i, j}
// CHECK-NEXT: ober.cross_entropy: ([i, j, k], [i, j, k]) -> ([]) {i=2, j=4, k=10} reduction={i:sum/mean, j:sum/mean} statistics={k:3}
func.func @cross_entropy(%l: tensor<2x4x10xf32>, %t: tensor<2x4xi64>, %p: tensor<2x4x10xf32>) -> (tensor<f32>, tensor<2x4xf32>, tensor<f32>, tensor<f32>, tensor<f32>) {
  %0 = ober.cross_entropy %l, %t {label_smoothing = 0.0 : f64, reduction = #ober.reduction<mean>} : (tensor<2x4x10xf32>, tensor<2x4xi64>) -> tensor<f32>
  %1 = ober.cross_entropy %l, %t {label_smoothing = 0.0 : f64, reduction = #ober.reduction<none>} : (tensor<2x4x10xf32>, tensor<2x4xi64>) -> tensor<2x4xf32>
  %2 = ober.cross_entropy %l, %t {label_smoothing = 0.1 : f64, reduction = #ober.reduction<sum>} : (tensor<2x4x10xf32>, tensor<2x4xi64>) -> tensor<f32>
  %3 = ober.cross_entropy %l, %t {label_smoothing = 0.0 : f64, reduction = #ober.reduction<mean>, ignore_index = -100 : i64} : (tensor<2x4x10xf32>, tensor<2x4xi64>) -> tensor<f32>
  %4 = ober.cross_entropy %l, %p {label_smoothing = 0.0 : f64, reduction = #ober.reduction<mean>} : (tensor<2x4x10xf32>, tensor<2x4x10xf32>) -> tensor<f32>
  return %0, %1, %2, %3, %4 : tensor<f32>, tensor<2x4xf32>, tensor<f32>, tensor<f32>, tensor<f32>
}

// CHECK-LABEL: rules of @mse
// CHECK-NEXT: ober.mse_loss: ([i, j], [i, j]) -> ([]) {i=4, j=8} reduction={i:sum/mean, j:sum/mean}
// CHECK-NEXT: ober.mse_loss: ([i, j], [i, j]) -> ([i, j]) {i=4, j=8}
func.func @mse(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> (tensor<f32>, tensor<4x8xf32>) {
  %0 = ober.mse_loss %a, %b {reduction = #ober.reduction<mean>} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<f32>
  %1 = ober.mse_loss %a, %b {reduction = #ober.reduction<none>} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0, %1 : tensor<f32>, tensor<4x8xf32>
}
