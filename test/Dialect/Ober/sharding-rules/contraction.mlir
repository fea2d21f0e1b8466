// RUN: ober-opt %s --pass-pipeline="builtin.module(test-ober-sharding-rules)" -o /dev/null | FileCheck %s

// Matmul: batch, row and column factors are parallel, the contraction a
// sum; multilinear in both operands. A 2-D weight under batched
// activations has no batch dimensions; a size-1 batch dimension broadcasts.
// CHECK-LABEL: rules of @matmul
// CHECK-NEXT: ober.matmul: ([i, j, l], [l, k]) -> ([i, j, k]) {i=2, j=4, k=16, l=8} reduction={l:sum} multilinear=(0, 1)
// CHECK-NEXT: ober.matmul: ([i, j, k, m], [1, j, m, l]) -> ([i, j, k, l]) {i=2, j=3, k=4, l=5, m=8} reduction={m:sum} multilinear=(0, 1)
// CHECK-NEXT: ober.matmul: ([i, k], [k, j]) -> ([i, j]) {i=4, j=16, k=8} reduction={k:sum} multilinear=(0, 1)
func.func @matmul(%x: tensor<2x4x8xf32>, %w: tensor<8x16xf32>, %q: tensor<2x3x4x8xf32>, %k: tensor<1x3x8x5xf32>, %a: tensor<4x8xf32>) -> (tensor<2x4x16xf32>, tensor<2x3x4x5xf32>, tensor<4x16xf32>) {
  %0 = ober.matmul %x, %w : (tensor<2x4x8xf32>, tensor<8x16xf32>) -> tensor<2x4x16xf32>
  %1 = ober.matmul %q, %k : (tensor<2x3x4x8xf32>, tensor<1x3x8x5xf32>) -> tensor<2x3x4x5xf32>
  %2 = ober.matmul %a, %w : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  return %0, %1, %2 : tensor<2x4x16xf32>, tensor<2x3x4x5xf32>, tensor<4x16xf32>
}

// A matmul of a vector has no rule (it runs whole).
// CHECK-LABEL: rules of @vector
// CHECK-NEXT: ober.matmul: none
func.func @vector(%v: tensor<8xf32>, %w: tensor<8x16xf32>) -> tensor<16xf32> {
  %0 = ober.matmul %v, %w : (tensor<8xf32>, tensor<8x16xf32>) -> tensor<16xf32>
  return %0 : tensor<16xf32>
}
