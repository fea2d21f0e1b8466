// RUN: ober-opt %s --pass-pipeline="builtin.module(test-ober-sharding-rules)" -o /dev/null | FileCheck %s

// Transpose permutes the factors; reshape shares factors between merged
// and split dimension groups (one dimension made of several factors, major
// first), and gives each dimension of a group that shares none a factor
// needing replication, up to the next dimensions that start at one element
// offset.
// CHECK-LABEL: rules of @views
// CHECK-NEXT: ober.transpose: ([i, j]) -> ([j, i]) {i=6, j=4} additive=(0)
// CHECK-NEXT: ober.reshape: ([i*j, k]) -> ([i, j*k]) {i=2, j=3, k=4} additive=(0)
// CHECK-NEXT: ober.reshape: ([i, j, k]) -> ([i*j*k]) {i=2, j=3, k=4} additive=(0)
// CHECK-NEXT: ober.reshape: ([i, j]) -> ([k, l]) {i=2, j=3, k=3, l=2} replication={i, j, k, l} additive=(0)
// CHECK-NEXT: ober.reshape: ([i]) -> ([1, i, 1]) {i=8} additive=(0)
func.func @views(%x: tensor<6x4xf32>, %y: tensor<2x3x4xf32>, %z: tensor<2x3xf32>, %u: tensor<8xf32>) -> (tensor<4x6xf32>, tensor<2x12xf32>, tensor<24xf32>, tensor<3x2xf32>, tensor<1x8x1xf32>) {
  %0 = ober.transpose %x {permutation = array<i64: 1, 0>} : tensor<6x4xf32> -> tensor<4x6xf32>
  %1 = ober.reshape %x : tensor<6x4xf32> to tensor<2x12xf32>
  %2 = ober.reshape %y : tensor<2x3x4xf32> to tensor<24xf32>
  %3 = ober.reshape %z : tensor<2x3xf32> to tensor<3x2xf32>
  %4 = ober.reshape %u : tensor<8xf32> to tensor<1x8x1xf32>
  return %0, %1, %2, %3, %4 : tensor<4x6xf32>, tensor<2x12xf32>, tensor<24xf32>, tensor<3x2xf32>, tensor<1x8x1xf32>
}

// Reshapes whose dimensions do not divide each other: [6, 4] -> [4, 6]
// shares its leading 2 (a split of either first dimension in two stays
// split); [3, 4, 2] -> [2, 6, 2] shares nothing up to its last dimensions,
// which start at one offset again.
// CHECK-LABEL: rules of @unaligned_views
// CHECK-NEXT: ober.reshape: ([i*j, k]) -> ([i*l, m]) {i=2, j=3, k=4, l=2, m=6} replication={j, k, l, m} additive=(0)
// CHECK-NEXT: ober.reshape: ([i, j, m]) -> ([k, l, m]) {i=3, j=4, k=2, l=6, m=2} replication={i, j, k, l} additive=(0)
func.func @unaligned_views(%x: tensor<6x4xf32>, %y: tensor<3x4x2xf32>) -> (tensor<4x6xf32>, tensor<2x6x2xf32>) {
  %0 = ober.reshape %x : tensor<6x4xf32> to tensor<4x6xf32>
  %1 = ober.reshape %y : tensor<3x4x2xf32> to tensor<2x6x2xf32>
  return %0, %1 : tensor<4x6xf32>, tensor<2x6x2xf32>
}

// Slice, split, concat and pad: untouched dimensions are parallel, the
// sliced, split, concatenated or padded one a permutation of the largest
// size.
// CHECK-LABEL: rules of @pieces
// CHECK-NEXT: ober.slice: ([i, j, k]) -> ([i, j, k]) {i=2, j=8, k=4} permutation={j} additive=(0)
// CHECK-NEXT: ober.split: ([i, j, k]) -> ([i, j, k], [i, j, k]) {i=2, j=8, k=4} permutation={j} additive=(0)
// CHECK-NEXT: ober.concat: ([i, j, k], [i, j, k]) -> ([i, j, k]) {i=2, j=13, k=4} permutation={j} additive=(0, 1)
// CHECK-NEXT: ober.pad: ([i, j, k]) -> ([i, j, k]) {i=2, j=10, k=4} permutation={j} additive=(0)
func.func @pieces(%x: tensor<2x8x4xf32>, %y: tensor<2x5x4xf32>) -> (tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x13x4xf32>, tensor<2x10x4xf32>) {
  %s = ober.slice %x {starts = array<i64: 0, 1, 0>, limits = array<i64: 2, 7, 4>, strides = array<i64: 1, 2, 1>} : tensor<2x8x4xf32> -> tensor<2x3x4xf32>
  %p:2 = ober.split %x {axis = 1 : i64, sizes = array<i64: 3, 5>} : (tensor<2x8x4xf32>) -> (tensor<2x3x4xf32>, tensor<2x5x4xf32>)
  %c = ober.concat %x, %y {axis = 1 : i64} : (tensor<2x8x4xf32>, tensor<2x5x4xf32>) -> tensor<2x13x4xf32>
  %d = ober.pad %x {low = array<i64: 0, 1, 0>, high = array<i64: 0, 1, 0>, mode = #ober.pad_mode<constant>, value = 0.0 : f64} : tensor<2x8x4xf32> -> tensor<2x10x4xf32>
  return %s, %p#0, %c, %d : tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x13x4xf32>, tensor<2x10x4xf32>
}
