// RUN: ober-opt %s --pass-pipeline="builtin.module(test-ober-sharding-rules)" -o /dev/null | FileCheck %s

// Reductions: reduced factors leave partial results of the op's kind (a
// mean divides by the parts), gone from the result or kept as size-1
// dimensions; sums and means pass partial sums.
// CHECK-LABEL: rules of @reductions
// CHECK-NEXT: ober.reduce_sum: ([i, j, k]) -> ([i]) {i=4, j=6, k=8} reduction={j:sum, k:sum} additive=(0)
// CHECK-NEXT: ober.reduce_mean: ([i, j, k]) -> ([i, 1, k]) {i=4, j=6, k=8} reduction={j:sum/mean} additive=(0)
// CHECK-NEXT: ober.reduce_max: ([i, j, k]) -> ([1, j, 1]) {i=4, j=6, k=8} reduction={i:max, k:max}
// CHECK-NEXT: ober.reduce_min: ([i, j, k]) -> ([j]) {i=4, j=6, k=8} reduction={i:min, k:min}
func.func @reductions(%x: tensor<4x6x8xf32>) -> (tensor<4xf32>, tensor<4x1x8xf32>, tensor<1x6x1xf32>, tensor<6xf32>) {
  %0 = ober.reduce_sum %x {axes = array<i64: 1, 2>, keepdims = false} : (tensor<4x6x8xf32>) -> tensor<4xf32>
  %1 = ober.reduce_mean %x {axes = array<i64: 1>, keepdims = true} : (tensor<4x6x8xf32>) -> tensor<4x1x8xf32>
  %2 = ober.reduce_max %x {axes = array<i64: 0, 2>, keepdims = true} : (tensor<4x6x8xf32>) -> tensor<1x6x1xf32>
  %3 = ober.reduce_min %x {axes = array<i64: 0, 2>, keepdims = false} : (tensor<4x6x8xf32>) -> tensor<6xf32>
  return %0, %1, %2, %3 : tensor<4xf32>, tensor<4x1x8xf32>, tensor<1x6x1xf32>, tensor<6xf32>
}
