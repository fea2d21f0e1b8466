// RUN: ober-opt %s --pass-pipeline="builtin.module(test-ober-sharding-rules)" -o /dev/null | FileCheck %s

// Elementwise ops with NumPy broadcasting: a factor per result dimension,
// in every operand that spans it (a missing leading dimension or a size-1
// dimension broadcast against a larger one does not); how partial sums
// pass each op.
// CHECK-LABEL: rules of @broadcasting
// CHECK-NEXT: ober.add: ([i, j], [j]) -> ([i, j]) {i=4, j=8} additive=(0, 1)
// CHECK-NEXT: ober.mul: ([i, j], [i, 1]) -> ([i, j]) {i=4, j=8} multilinear=(0, 1)
// CHECK-NEXT: ober.div: ([i, j], [j]) -> ([i, j]) {i=4, j=8} multilinear=(0)
// CHECK-NEXT: ober.neg: ([i, j]) -> ([i, j]) {i=4, j=8} additive=(0)
// CHECK-NEXT: ober.tanh: ([i, j]) -> ([i, j]) {i=4, j=8}
// CHECK-NEXT: ober.cmp: ([i, j], [j]) -> ([i, j]) {i=4, j=8}
// CHECK-NEXT: ober.select: ([i, j], [i, j], [i, 1]) -> ([i, j]) {i=4, j=8}
// CHECK-NEXT: ober.cast: ([i, j]) -> ([i, j]) {i=4, j=8} additive=(0)
// CHECK-NEXT: ober.cast: ([i, j]) -> ([i, j]) {i=4, j=8}
func.func @broadcasting(%a: tensor<4x8xf32>, %row: tensor<8xf32>, %col: tensor<4x1xf32>, %c: tensor<4x8xi1>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xi1>, tensor<4x8xf32>, tensor<4x8xf16>, tensor<4x8xi32>) {
  %0 = ober.add %a, %row : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %1 = ober.mul %a, %col : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %2 = ober.div %a, %row : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %3 = ober.neg %a : tensor<4x8xf32>
  %4 = ober.tanh %a : tensor<4x8xf32>
  %5 = ober.cmp gt, %a, %row : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xi1>
  %6 = ober.select %c, %a, %col : (tensor<4x8xi1>, tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %7 = ober.cast %a : tensor<4x8xf32> to tensor<4x8xf16>
  %8 = ober.cast %a : tensor<4x8xf32> to tensor<4x8xi32>
  return %0, %1, %2, %3, %4, %5, %6, %7, %8 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xi1>, tensor<4x8xf32>, tensor<4x8xf16>, tensor<4x8xi32>
}

// Dropout's mask depends on each element's global position: its factors
// need replication unless nothing is dropped. broadcast_to is linear.
// CHECK-LABEL: rules of @dropout
// CHECK-NEXT: ober.dropout: ([i, j], []) -> ([i, j], [i, j]) {i=4, j=8} replication={i, j}
// CHECK-NEXT: ober.dropout: ([i, j], []) -> ([i, j], [i, j]) {i=4, j=8}
// CHECK-NEXT: ober.broadcast_to: ([k]) -> ([i, j, k]) {i=2, j=4, k=8} additive=(0)
func.func @dropout(%x: tensor<4x8xf32>, %seed: tensor<i64>, %b: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<2x4x8xf32>) {
  %d:2 = ober.dropout %x, %seed {ratio = 0.1 : f64} : (tensor<4x8xf32>, tensor<i64>) -> (tensor<4x8xf32>, tensor<4x8xi1>)
  %k:2 = ober.dropout %x, %seed {ratio = 0.0 : f64} : (tensor<4x8xf32>, tensor<i64>) -> (tensor<4x8xf32>, tensor<4x8xi1>)
  %e = ober.broadcast_to %b : tensor<8xf32> to tensor<2x4x8xf32>
  return %d#0, %k#0, %e : tensor<4x8xf32>, tensor<4x8xf32>, tensor<2x4x8xf32>
}
