// RUN: ober-opt %s --convert-ober-to-linalg --split-input-file | FileCheck %s

// layer_norm: the mean and the biased variance over the trailing
// dimensions (sums divided by 8), then (x - mean) / sqrt(var + eps) times
// the scale plus the bias.
// CHECK-LABEL: func.func @layer_norm
// CHECK-DAG: arith.constant 8.000000e+00 : f32
// CHECK-DAG: arith.constant 9.99999974E-6 : f32
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]
// CHECK: arith.divf
// CHECK: arith.subf
// CHECK: arith.mulf
// CHECK: math.sqrt
// CHECK-NOT: ober.
func.func @layer_norm(%x: tensor<2x3x8xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<2x3x8xf32> {
  %0 = ober.layer_norm %x scale %g bias %b {axis = 2 : i64, epsilon = 1.0e-05 : f64} : (tensor<2x3x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x3x8xf32>
  return %0 : tensor<2x3x8xf32>
}

// -----

// Slices and splits are extract_slices (a negative stride reads element by
// element), concat inserts its pieces, iota writes each index.
// CHECK-LABEL: func.func @slices
// CHECK: tensor.extract_slice %{{.*}}[1, 0] [2, 2] [2, 3] : tensor<4x6xf32> to tensor<2x2xf32>
// CHECK: tensor.extract
// CHECK: tensor.extract_slice %{{.*}}[0, 2] [4, 4] [1, 1]
// CHECK: tensor.insert_slice %{{.*}} into %{{.*}}[0, 0] [4, 4] [1, 1] : tensor<4x4xf32> into tensor<4x10xf32>
// CHECK: tensor.insert_slice %{{.*}} into %{{.*}}[0, 4] [4, 6] [1, 1]
// CHECK: linalg.index 1
func.func @slices(%y: tensor<4x6xf32>) -> (tensor<2x2xf32>, tensor<4x3xf32>, tensor<4x10xf32>, tensor<2x5xi64>) {
  %s = ober.slice %y {starts = array<i64: 1, 0>, limits = array<i64: 4, 6>, strides = array<i64: 2, 3>} : tensor<4x6xf32> -> tensor<2x2xf32>
  %r = ober.slice %y {starts = array<i64: 3, 5>, limits = array<i64: -1, 0>, strides = array<i64: -1, -2>} : tensor<4x6xf32> -> tensor<4x3xf32>
  %p:2 = ober.split %y {axis = 1 : i64, sizes = array<i64: 2, 4>} : (tensor<4x6xf32>) -> (tensor<4x2xf32>, tensor<4x4xf32>)
  %c = ober.concat %p#1, %y {axis = 1 : i64} : (tensor<4x4xf32>, tensor<4x6xf32>) -> tensor<4x10xf32>
  %i = ober.iota {dimension = 1 : i64} : tensor<2x5xi64>
  return %s, %r, %c, %i : tensor<2x2xf32>, tensor<4x3xf32>, tensor<4x10xf32>, tensor<2x5xi64>
}

// -----

// scatter_add loops over the indices, adding each row of the updates into
// the row the index names (clamped, negative from the end).
// CHECK-LABEL: func.func @scatter_add
// CHECK: scf.for %{{.*}} = %c0 to %c4 step %c1 iter_args(%[[ACC:.*]] = %arg0) -> (tensor<7x3xf32>)
// CHECK: tensor.extract %{{.*}}[%{{.*}}] : tensor<4xi64>
// CHECK: arith.maxsi
// CHECK: tensor.extract_slice %[[ACC]]
// CHECK: arith.addf
// CHECK: tensor.insert_slice
func.func @scatter_add(%t: tensor<7x3xf32>, %rows: tensor<4xi64>, %u: tensor<4x3xf32>) -> tensor<7x3xf32> {
  %0 = ober.scatter_add %t, %rows, %u {axis = 0 : i64} : (tensor<7x3xf32>, tensor<4xi64>, tensor<4x3xf32>) -> tensor<7x3xf32>
  return %0 : tensor<7x3xf32>
}
