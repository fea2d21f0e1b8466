// RUN: ober-opt %s --pass-pipeline="builtin.module(test-ober-sharding-rules)" -o /dev/null | FileCheck %s

// Convolution with groups: the channels factor into groups (parallel, the
// major factor), the contracted input channels of a group (a sum) and its
// output channels (parallel); positions are permutations (a halo), the
// kernel window needs replication. Without bias the op is multilinear.
// CHECK-LABEL: rules of @conv
// CHECK-NEXT: ober.conv: ([i, j*l, m, n], [j*k, l, o, p], [j*k]) -> ([i, j*k, m, n]) {i=2, j=2, k=4, l=2, m=9, n=9, o=3, p=3} reduction={l:sum} replication={o, p} permutation={m, n} added=(2)
// CHECK-NEXT: ober.conv: ([i, k, l, m], [j, k, n, o]) -> ([i, j, l, m]) {i=2, j=8, k=4, l=9, m=9, n=3, o=3} reduction={k:sum} replication={n, o} permutation={l, m} multilinear=(0, 1)
func.func @conv(%x: tensor<2x4x9x9xf32>, %w: tensor<8x2x3x3xf32>, %b: tensor<8xf32>, %w1: tensor<8x4x3x3xf32>) -> (tensor<2x8x7x7xf32>, tensor<2x8x7x7xf32>) {
  %0 = ober.conv %x, %w, %b {strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, groups = 2 : i64} : (tensor<2x4x9x9xf32>, tensor<8x2x3x3xf32>, tensor<8xf32>) -> tensor<2x8x7x7xf32>
  %1 = ober.conv %x, %w1 {strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, groups = 1 : i64} : (tensor<2x4x9x9xf32>, tensor<8x4x3x3xf32>) -> tensor<2x8x7x7xf32>
  return %0, %1 : tensor<2x8x7x7xf32>, tensor<2x8x7x7xf32>
}

// The gradients: conv_transpose's weight is [C, O/g, K...]; the weight
// gradient sums over samples and keeps the channel factors.
// CHECK-LABEL: rules of @gradients
// CHECK-NEXT: ober.conv_transpose: ([1, i, k, l], [i, j, m, n]) -> ([1, i*j, k, l]) {i=4, j=2, k=7, l=7, m=3, n=3} replication={m, n} permutation={k, l} multilinear=(0, 1)
// CHECK-NEXT: ober.conv_weight_grad: ([i, j*l, m, p], [i, j*k, n, q]) -> ([j*k, l, o, r]) {i=2, j=2, k=4, l=2, m=9, n=7, o=3, p=9, q=7, r=3} reduction={i:sum} replication={m, n, o, p, q, r} multilinear=(0, 1)
func.func @gradients(%x: tensor<1x4x5x5xf32>, %w: tensor<4x2x3x3xf32>, %i: tensor<2x4x9x9xf32>, %g: tensor<2x8x7x7xf32>) -> (tensor<1x8x7x7xf32>, tensor<8x2x3x3xf32>) {
  %0 = ober.conv_transpose %x, %w {strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, output_padding = array<i64: 0, 0>, groups = 4 : i64} : (tensor<1x4x5x5xf32>, tensor<4x2x3x3xf32>) -> tensor<1x8x7x7xf32>
  %1 = ober.conv_weight_grad %i, %g {kernel = array<i64: 3, 3>, strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, groups = 2 : i64} : (tensor<2x4x9x9xf32>, tensor<2x8x7x7xf32>) -> tensor<8x2x3x3xf32>
  return %0, %1 : tensor<1x8x7x7xf32>, tensor<8x2x3x3xf32>
}

// Pooling and its gradients: samples and channels are parallel, positions
// permutations of the larger size.
// CHECK-LABEL: rules of @pooling
// CHECK-NEXT: ober.max_pool: ([i, j, k, l]) -> ([i, j, k, l]) {i=2, j=3, k=8, l=8} permutation={k, l}
// CHECK-NEXT: ober.avg_pool: ([i, j, k, l]) -> ([i, j, k, l]) {i=2, j=3, k=8, l=8} permutation={k, l} additive=(0)
// CHECK-NEXT: ober.max_pool_grad: ([i, j, k, l], [i, j, k, l]) -> ([i, j, k, l]) {i=2, j=3, k=8, l=8} permutation={k, l} additive=(1)
// CHECK-NEXT: ober.avg_pool_grad: ([i, j, k, l], [i, j, k, l]) -> ([i, j, k, l]) {i=2, j=3, k=8, l=8} permutation={k, l} additive=(1)
func.func @pooling(%x: tensor<2x3x8x8xf32>, %g: tensor<2x3x4x4xf32>) -> (tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32>, tensor<2x3x8x8xf32>, tensor<2x3x8x8xf32>) {
  %0 = ober.max_pool %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, ceil_mode = false} : (tensor<2x3x8x8xf32>) -> tensor<2x3x4x4xf32>
  %1 = ober.avg_pool %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>, ceil_mode = false, count_include_pad = false} : (tensor<2x3x8x8xf32>) -> tensor<2x3x4x4xf32>
  %2 = ober.max_pool_grad %x, %g {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, ceil_mode = false} : (tensor<2x3x8x8xf32>, tensor<2x3x4x4xf32>) -> tensor<2x3x8x8xf32>
  %3 = ober.avg_pool_grad %x, %g {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>, ceil_mode = false, count_include_pad = false} : (tensor<2x3x8x8xf32>, tensor<2x3x4x4xf32>) -> tensor<2x3x8x8xf32>
  return %0, %1, %2, %3 : tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32>, tensor<2x3x8x8xf32>, tensor<2x3x8x8xf32>
}
