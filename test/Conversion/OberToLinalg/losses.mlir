// RUN: ober-opt %s --convert-ober-to-linalg --split-input-file | FileCheck %s

// softmax: the largest value, the sum of exponentials of the shifted
// values, then their quotient; all reductions along the axis.
// CHECK-LABEL: func.func @softmax
// CHECK: arith.maximumf
// CHECK: math.exp
// CHECK: arith.addf
// CHECK: math.exp
// CHECK: arith.divf
// CHECK-NOT: ober.
func.func @softmax(%x: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %0 = ober.softmax %x {axis = 1 : i64} : tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// -----

// Cross-entropy of class indices: log_softmax, then per sample the target
// class's log probability (compared with linalg.index) and the sum, mixed
// by label smoothing; an ignored target gives 0 and is not counted.
// CHECK-LABEL: func.func @cross_entropy
// CHECK-DAG: arith.constant 0.899999976 : f32
// CHECK-DAG: arith.constant 2.500000e-02 : f32
// CHECK: math.log
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
// CHECK: linalg.index 1
// CHECK: arith.cmpi eq
// CHECK: arith.mulf
// CHECK: arith.cmpi ne
// CHECK: arith.divf
func.func @cross_entropy(%x: tensor<5x4xf32>, %t: tensor<5xi64>) -> tensor<f32> {
  %0 = ober.cross_entropy %x, %t {label_smoothing = 0.1 : f64, reduction = #ober.reduction<mean>, ignore_index = 2 : i64} : (tensor<5x4xf32>, tensor<5xi64>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// one_hot compares the position along its axis with the (wrapped) index;
// gather extracts at the clamped index.
// CHECK-LABEL: func.func @indexing
// CHECK: linalg.index 1
// CHECK: arith.select
// CHECK: tensor.extract
func.func @indexing(%i: tensor<3xi64>, %x: tensor<4x2xf32>) -> (tensor<3x5xf32>, tensor<3x2xf32>) {
  %0 = ober.one_hot %i {axis = 1 : i64, depth = 5 : i64} : (tensor<3xi64>) -> tensor<3x5xf32>
  %1 = ober.gather %x, %i {axis = 0 : i64} : (tensor<4x2xf32>, tensor<3xi64>) -> tensor<3x2xf32>
  return %0, %1 : tensor<3x5xf32>, tensor<3x2xf32>
}
