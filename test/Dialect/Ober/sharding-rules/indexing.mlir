// RUN: ober-opt %s --pass-pipeline="builtin.module(test-ober-sharding-rules)" -o /dev/null | FileCheck %s

// Embedding and gather: the gathered axis is a sum of masked rows over a
// split (addressed by index), the indices' dimensions and the input's others
// parallel. scatter_add, their gradient: the scattered axis is parallel and
// indexed, the indices' dimensions sum the updates. one_hot's classes are
// parallel and indexed.
// CHECK-LABEL: rules of @lookups
// CHECK-NEXT: ober.embedding: ([k, l], [i, j]) -> ([i, j, l]) {i=4, j=3, k=10, l=6} reduction={k:sum} indexed={k} additive=(0)
// CHECK-NEXT: ober.gather: ([j, k, l], [i]) -> ([j, i, l]) {i=3, j=5, k=7, l=2} reduction={k:sum} indexed={k} additive=(0)
// CHECK-NEXT: ober.scatter_add: ([i, j, k], [l], [i, l, k]) -> ([i, j, k]) {i=5, j=7, k=2, l=3} reduction={l:sum} indexed={j} additive=(0, 2) added=(0)
// CHECK-NEXT: ober.one_hot: ([i]) -> ([i, j]) {i=4, j=5} indexed={j}
func.func @lookups(%table: tensor<10x6xf32>, %ids: tensor<4x3xi64>, %x: tensor<5x7x2xf32>, %i: tensor<3xi64>, %u: tensor<5x3x2xf32>, %y: tensor<4xi64>) -> (tensor<4x3x6xf32>, tensor<5x3x2xf32>, tensor<5x7x2xf32>, tensor<4x5xf32>) {
  %0 = ober.embedding %table, %ids : (tensor<10x6xf32>, tensor<4x3xi64>) -> tensor<4x3x6xf32>
  %1 = ober.gather %x, %i {axis = 1 : i64} : (tensor<5x7x2xf32>, tensor<3xi64>) -> tensor<5x3x2xf32>
  %2 = ober.scatter_add %x, %i, %u {axis = 1 : i64} : (tensor<5x7x2xf32>, tensor<3xi64>, tensor<5x3x2xf32>) -> tensor<5x7x2xf32>
  %3 = ober.one_hot %y {axis = 1 : i64, depth = 5 : i64} : (tensor<4xi64>) -> tensor<4x5xf32>
  return %0, %1, %2, %3 : tensor<4x3x6xf32>, tensor<5x3x2xf32>, tensor<5x7x2xf32>, tensor<4x5xf32>
}

// Attention: leading dimensions, queries and value columns are parallel
// (queries need replication under a causal mask); keys and the head
// dimension need replication. The mask broadcasts over the heads.
// CHECK-LABEL: rules of @attention
// CHECK-NEXT: ober.attention: ([i, j, k, m], [i, j, l, m], [i, j, l, n], [i, 1, k, l]) -> ([i, j, k, n]) {i=2, j=4, k=8, l=10, m=16, n=32} replication={l, m}
// CHECK-NEXT: ober.attention: ([i, j, k, m], [i, j, l, m], [i, j, l, n]) -> ([i, j, k, n]) {i=2, j=4, k=8, l=10, m=16, n=32} replication={k, l, m}
func.func @attention(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x10x16xf32>, %v: tensor<2x4x10x32xf32>, %m: tensor<2x1x8x10xf32>) -> (tensor<2x4x8x32xf32>, tensor<2x4x8x32xf32>) {
  %0 = ober.attention %q, %k, %v, %m : (tensor<2x4x8x16xf32>, tensor<2x4x10x16xf32>, tensor<2x4x10x32xf32>, tensor<2x1x8x10xf32>) -> tensor<2x4x8x32xf32>
  %1 = ober.attention %q, %k, %v {is_causal} : (tensor<2x4x8x16xf32>, tensor<2x4x10x16xf32>, tensor<2x4x10x32xf32>) -> tensor<2x4x8x32xf32>
  return %0, %1 : tensor<2x4x8x32xf32>, tensor<2x4x8x32xf32>
}

// Attention's gradients: batch and heads parallel in every tensor; queries,
// keys and both head dimensions need whole tensors (each gradient sums over
// the others).
// CHECK-LABEL: rules of @attention_grad
// CHECK-NEXT: ober.attention_grad: ([i, j, k, m], [i, j, l, m], [i, j, l, n], [i, j, k, n], [i, j, k, n], [k, l]) -> ([i, j, k, m], [i, j, l, m], [i, j, l, n]) {i=2, j=4, k=8, l=10, m=16, n=32} replication={k, l, m, n}
func.func @attention_grad(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x10x16xf32>, %v: tensor<2x4x10x32xf32>, %o: tensor<2x4x8x32xf32>, %m: tensor<8x10xi1>) -> tensor<2x4x8x16xf32> {
  %dq, %dk, %dv = ober.attention_grad %q, %k, %v, %o, %o, %m {is_causal} : (tensor<2x4x8x16xf32>, tensor<2x4x10x16xf32>, tensor<2x4x10x32xf32>, tensor<2x4x8x32xf32>, tensor<2x4x8x32xf32>, tensor<8x10xi1>) -> (tensor<2x4x8x16xf32>, tensor<2x4x10x16xf32>, tensor<2x4x10x32xf32>)
  return %dq : tensor<2x4x8x16xf32>
}

// scatter replaces slices: the scattered axis and the indices' dimensions
// need whole tensors (a replaced slice may lie in another block), the
// input's other dimensions are parallel with the updates'.
// CHECK-LABEL: rules of @replace
// CHECK-NEXT: ober.scatter: ([i, j, k], [l], [i, l, k]) -> ([i, j, k]) {i=5, j=7, k=2, l=3} replication={j, l}
func.func @replace(%x: tensor<5x7x2xf32>, %i: tensor<3xi64>, %u: tensor<5x3x2xf32>) -> tensor<5x7x2xf32> {
  %0 = ober.scatter %x, %i, %u {axis = 1 : i64} : (tensor<5x7x2xf32>, tensor<3xi64>, tensor<5x3x2xf32>) -> tensor<5x7x2xf32>
  return %0 : tensor<5x7x2xf32>
}
