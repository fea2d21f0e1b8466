// RUN: ober-opt %s --convert-ober-to-linalg --split-input-file | FileCheck %s

// Activations times a weight: batch and rows become the rows of one
// linalg.matmul.
// CHECK-LABEL: func.func @dense
// CHECK: tensor.collapse_shape %{{.*}} {{\[\[}}0, 1], [2]] : tensor<8x16x32xf32> into tensor<128x32xf32>
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<128x32xf32>, tensor<32x64xf32>) outs(%{{.*}} : tensor<128x64xf32>)
// CHECK: tensor.expand_shape {{.*}} into tensor<8x16x64xf32>
func.func @dense(%x: tensor<8x16x32xf32>, %w: tensor<32x64xf32>) -> tensor<8x16x64xf32> {
  %0 = ober.matmul %x, %w : (tensor<8x16x32xf32>, tensor<32x64xf32>) -> tensor<8x16x64xf32>
  return %0 : tensor<8x16x64xf32>
}

// -----

// Attention scores: batch dimensions collapse into one for
// linalg.batch_matmul; bf16 accumulates in f32 and rounds once.
// CHECK-LABEL: func.func @scores
// CHECK: linalg.batch_matmul ins(%{{.*}}, %{{.*}} : tensor<8x4x16xbf16>, tensor<8x16x4xbf16>) outs(%{{.*}} : tensor<8x4x4xf32>)
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK: into tensor<2x4x4x4xbf16>
func.func @scores(%q: tensor<2x4x4x16xbf16>, %k: tensor<2x4x16x4xbf16>) -> tensor<2x4x4x4xbf16> {
  %0 = ober.matmul %q, %k : (tensor<2x4x4x16xbf16>, tensor<2x4x16x4xbf16>) -> tensor<2x4x4x4xbf16>
  return %0 : tensor<2x4x4x4xbf16>
}

// -----

// Vectors: a row vector on the left, a broadcast batch on the right.
// CHECK-LABEL: func.func @vector_batch
// CHECK: linalg.generic
// CHECK: linalg.batch_matmul ins(%{{.*}}, %{{.*}} : tensor<3x1x5xf32>, tensor<3x5x2xf32>)
// CHECK: into tensor<3x2xf32>
func.func @vector_batch(%v: tensor<5xf32>, %m: tensor<3x5x2xf32>) -> tensor<3x2xf32> {
  %0 = ober.matmul %v, %m : (tensor<5xf32>, tensor<3x5x2xf32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}
