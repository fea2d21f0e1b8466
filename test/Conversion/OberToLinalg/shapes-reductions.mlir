// RUN: ober-opt %s --convert-ober-to-linalg --split-input-file | FileCheck %s

// Views: a reshape that regroups dimensions collapses (or expands) once,
// one that does not goes through one dimension; transpose and
// broadcast_to; constants become arith.constant.
// CHECK-LABEL: func.func @views
// CHECK: arith.constant dense<1.000000e+00> : tensor<3x2xf32>
// CHECK: tensor.collapse_shape %{{.*}} {{\[\[}}0, 1]] : tensor<2x3xf32> into tensor<6xf32>
// CHECK: tensor.expand_shape %{{.*}} {{\[\[}}0, 1]] output_shape [3, 2] : tensor<6xf32> into tensor<3x2xf32>
// CHECK: linalg.transpose ins(%{{.*}} : tensor<3x2xf32>) outs(%{{.*}} : tensor<2x3xf32>) permutation = [1, 0]
// CHECK: linalg.generic
// CHECK: tensor.expand_shape %{{.*}} {{\[\[}}0], [1, 2]] output_shape [2, 3, 1] : tensor<2x3xf32> into tensor<2x3x1xf32>
// CHECK-NOT: ober.
func.func @views(%x: tensor<2x3xf32>, %v: tensor<3xf32>) -> (tensor<3x2xf32>, tensor<2x3xf32>, tensor<4x3xf32>, tensor<2x3x1xf32>) {
  %c = ober.constant dense<1.0> : tensor<3x2xf32>
  %0 = ober.reshape %x : tensor<2x3xf32> to tensor<3x2xf32>
  %1 = ober.add %0, %c : tensor<3x2xf32>
  %2 = ober.transpose %1 {permutation = array<i64: 1, 0>} : tensor<3x2xf32> -> tensor<2x3xf32>
  %3 = ober.broadcast_to %v : tensor<3xf32> to tensor<4x3xf32>
  %4 = ober.reshape %x : tensor<2x3xf32> to tensor<2x3x1xf32>
  return %1, %2, %3, %4 : tensor<3x2xf32>, tensor<2x3xf32>, tensor<4x3xf32>, tensor<2x3x1xf32>
}

// -----

// Reductions: the reduced axes iterate as reductions into a filled
// accumulator; sums accumulate in f64 (reassociable) and round to the
// compute type after; max starts at -inf and propagates NaN; a mean divides
// by the count (8 = 2 x 4); keepdims expands; bf16 computes in f32.
// CHECK-LABEL: func.func @reductions
// CHECK-DAG: %[[NINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK-DAG: %[[COUNT:.*]] = arith.constant 8.000000e+00 : f32
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f64
// CHECK: linalg.fill ins(%[[ZERO]] : f64)
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction", "parallel", "reduction"]
// CHECK: arith.extf %{{.*}} : f32 to f64
// CHECK: arith.addf %{{.*}}, %{{.*}} fastmath<reassoc> : f64
// CHECK: arith.truncf %{{.*}} : f64 to f32
// CHECK: arith.divf %{{.*}}, %[[COUNT]]
// CHECK: tensor.expand_shape
// CHECK: linalg.fill ins(%[[NINF]] : f32)
// CHECK: arith.maximumf
// CHECK: arith.extf %{{.*}} : bf16 to f32
// CHECK: arith.truncf %{{.*}} : f32 to bf16
func.func @reductions(%x: tensor<2x3x4xf32>, %h: tensor<5xbf16>) -> (tensor<1x3x1xf32>, tensor<2x4xf32>, tensor<bf16>) {
  %0 = ober.reduce_mean %x {axes = array<i64: 0, 2>, keepdims = true} : (tensor<2x3x4xf32>) -> tensor<1x3x1xf32>
  %1 = ober.reduce_max %x {axes = array<i64: 1>, keepdims = false} : (tensor<2x3x4xf32>) -> tensor<2x4xf32>
  %2 = ober.reduce_sum %h {axes = array<i64: 0>, keepdims = false} : (tensor<5xbf16>) -> tensor<bf16>
  return %0, %1, %2 : tensor<1x3x1xf32>, tensor<2x4xf32>, tensor<bf16>
}
