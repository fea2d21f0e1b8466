// RUN: ober-opt %s --convert-ober-to-linalg --split-input-file | FileCheck %s

// Training batch norm: channel sums over dimensions 0 and 2, then the
// normalization and both running statistics.
// CHECK-LABEL: func.func @batch_norm
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction", "parallel", "reduction"]
// CHECK: math.sqrt
// CHECK: return %{{.*}}, %{{.*}}, %{{.*}} : tensor<4x3x5xf32>, tensor<3xf32>, tensor<3xf32>
func.func @batch_norm(%x: tensor<4x3x5xf32>, %c: tensor<3xf32>) -> (tensor<4x3x5xf32>, tensor<3xf32>, tensor<3xf32>) {
  %0:3 = ober.batch_norm_training %x, %c, %c, %c, %c {epsilon = 1.0e-5 : f64, momentum = 0.1 : f64} : (tensor<4x3x5xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<4x3x5xf32>, tensor<3xf32>, tensor<3xf32>)
  return %0#0, %0#1, %0#2 : tensor<4x3x5xf32>, tensor<3xf32>, tensor<3xf32>
}

// -----

// Reflect padding reads mirrored positions.
// CHECK-LABEL: func.func @pad_reflect
// CHECK: linalg.generic
// CHECK: tensor.extract
func.func @pad_reflect(%x: tensor<3x4xf32>) -> tensor<6x9xf32> {
  %0 = ober.pad %x {low = array<i64: 1, 2>, high = array<i64: 2, 3>, mode = #ober.pad_mode<reflect>, value = 0.0 : f64} : tensor<3x4xf32> -> tensor<6x9xf32>
  return %0 : tensor<6x9xf32>
}

// -----

// cumsum loops along its axis carrying the running sum.
// CHECK-LABEL: func.func @cumsum
// CHECK: scf.for {{.*}} iter_args
// CHECK: tensor.insert_slice
func.func @cumsum(%x: tensor<3x5xf32>) -> tensor<3x5xf32> {
  %0 = ober.cumsum %x {axis = 1 : i64, exclusive = true, reverse = true} : tensor<3x5xf32>
  return %0 : tensor<3x5xf32>
}

// -----

// argmax carries the best index and value along the axis.
// CHECK-LABEL: func.func @argmax
// CHECK: %{{.*}}:2 = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
func.func @argmax(%x: tensor<4x6xf32>) -> tensor<4xi64> {
  %0 = ober.argmax %x {axis = 1 : i64, keepdims = false, select_last_index = false} : (tensor<4x6xf32>) -> tensor<4xi64>
  return %0 : tensor<4xi64>
}

// -----

// Dropout draws SplitMix64 of (seed, index) in i64 arithmetic.
// CHECK-LABEL: func.func @dropout
// CHECK-DAG: arith.constant -4658895280553007687 : i64
// CHECK-DAG: arith.constant -7723592293110705685 : i64
// CHECK: %{{.*}}:2 = linalg.generic
// CHECK: arith.shrui
// CHECK: arith.uitofp
// CHECK: arith.cmpf oge
func.func @dropout(%x: tensor<4x6xf32>, %seed: tensor<i64>) -> (tensor<4x6xf32>, tensor<4x6xi1>) {
  %0:2 = ober.dropout %x, %seed {ratio = 0.25 : f64} : (tensor<4x6xf32>, tensor<i64>) -> (tensor<4x6xf32>, tensor<4x6xi1>)
  return %0#0, %0#1 : tensor<4x6xf32>, tensor<4x6xi1>
}
