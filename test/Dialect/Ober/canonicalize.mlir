// RUN: ober-opt %s -canonicalize -split-input-file | FileCheck %s

// CHECK-LABEL: func @arith_identities
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>)
func.func @arith_identities(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %zero = ober.constant dense<0.0> : tensor<4xf32>
  %one = ober.constant dense<1.0> : tensor<f32>
  %0 = ober.add %x, %zero : tensor<4xf32>
  %1 = ober.add %zero, %x : tensor<4xf32>
  %2 = ober.mul %x, %one : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %3 = ober.sub %x, %zero : tensor<4xf32>
  %4 = ober.div %x, %one : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  // CHECK-NOT: ober.
  // CHECK: return %[[X]], %[[X]], %[[X]], %[[X]], %[[X]]
  return %0, %1, %2, %3, %4 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// An identity that broadcasts changes the shape: it stays.
// CHECK-LABEL: func @broadcasting_identity
func.func @broadcasting_identity(%x: tensor<4xf32>) -> tensor<3x4xf32> {
  %zero = ober.constant dense<0.0> : tensor<3x4xf32>
  // CHECK: ober.add
  %0 = ober.add %x, %zero : (tensor<4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

// CHECK-LABEL: func @constant_arith
func.func @constant_arith() -> (tensor<3xf32>, tensor<2xi64>, tensor<2xi64>, tensor<3xf32>) {
  %a = ober.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %b = ober.constant dense<0.5> : tensor<3xf32>
  %i = ober.constant dense<[7, -7]> : tensor<2xi64>
  %j = ober.constant dense<2> : tensor<2xi64>
  %z = ober.constant dense<[1, 0]> : tensor<2xi64>
  // CHECK-DAG: %[[F:.*]] = ober.constant dense<[2.000000e+00, 4.000000e+00, 6.000000e+00]> : tensor<3xf32>
  %0 = ober.mul %a, %b : tensor<3xf32>
  %1 = ober.add %0, %a : tensor<3xf32>
  %2 = ober.div %1, %b : tensor<3xf32>
  %3 = ober.sub %2, %a : tensor<3xf32>
  // CHECK-DAG: %[[I:.*]] = ober.constant dense<[3, -3]> : tensor<2xi64>
  %4 = ober.div %i, %j : tensor<2xi64>
  // Integer division by zero is left for run time.
  // CHECK-DAG: %[[Z:.*]] = ober.div
  %5 = ober.div %i, %z : tensor<2xi64>
  // CHECK-DAG: %[[N:.*]] = ober.constant dense<[-1.000000e+00, -2.000000e+00, -3.000000e+00]> : tensor<3xf32>
  %6 = ober.neg %a : tensor<3xf32>
  // CHECK: return %[[F]], %[[I]], %[[Z]], %[[N]]
  return %3, %4, %5, %6 : tensor<3xf32>, tensor<2xi64>, tensor<2xi64>, tensor<3xf32>
}

// -----

// CHECK-LABEL: func @neg_neg
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>)
func.func @neg_neg(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = ober.neg %x : tensor<4xf32>
  %1 = ober.neg %0 : tensor<4xf32>
  // CHECK: return %[[X]]
  return %1 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func @select
// CHECK-SAME: (%[[C:.*]]: tensor<4xi1>, %[[A:.*]]: tensor<4xf32>, %[[B:.*]]: tensor<4xf32>)
func.func @select(%c: tensor<4xi1>, %a: tensor<4xf32>, %b: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %t = ober.constant dense<true> : tensor<4xi1>
  %f = ober.constant dense<false> : tensor<i1>
  %0 = ober.select %c, %a, %a : (tensor<4xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = ober.select %t, %a, %b : (tensor<4xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %2 = ober.select %f, %a, %b : (tensor<i1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  // CHECK: return %[[A]], %[[A]], %[[B]]
  return %0, %1, %2 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// CHECK-LABEL: func @cast
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>)
func.func @cast(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<3xi32>, tensor<3xbf16>, tensor<2xf32>, tensor<2xi1>, tensor<3xi32>) {
  %same = ober.cast %x : tensor<4xf32> to tensor<4xf32>
  %f = ober.constant dense<[2.7, -2.7, 1.0e10]> : tensor<3xf32>
  %g = ober.constant dense<[2.7, -2.7, 3.0]> : tensor<3xf32>
  %b = ober.constant dense<[true, false]> : tensor<2xi1>
  %i = ober.constant dense<[0, 5]> : tensor<2xi64>
  // CHECK-DAG: %[[TRUNC:.*]] = ober.constant dense<[2, -2, 3]> : tensor<3xi32>
  %0 = ober.cast %g : tensor<3xf32> to tensor<3xi32>
  // CHECK-DAG: %[[BF:.*]] = ober.constant dense<[2.703130e+00, -2.703130e+00, 3.000000e+00]> : tensor<3xbf16>
  %1 = ober.cast %g : tensor<3xf32> to tensor<3xbf16>
  // CHECK-DAG: %[[BOOLF:.*]] = ober.constant dense<[1.000000e+00, 0.000000e+00]> : tensor<2xf32>
  %2 = ober.cast %b : tensor<2xi1> to tensor<2xf32>
  // CHECK-DAG: %[[TOBOOL:.*]] = ober.constant dense<[false, true]> : tensor<2xi1>
  %3 = ober.cast %i : tensor<2xi64> to tensor<2xi1>
  // Out of range for i32: not folded.
  // CHECK-DAG: %[[KEEP:.*]] = ober.cast
  %4 = ober.cast %f : tensor<3xf32> to tensor<3xi32>
  // CHECK: return %[[X]], %[[TRUNC]], %[[BF]], %[[BOOLF]], %[[TOBOOL]], %[[KEEP]]
  return %same, %0, %1, %2, %3, %4 : tensor<4xf32>, tensor<3xi32>, tensor<3xbf16>, tensor<2xf32>, tensor<2xi1>, tensor<3xi32>
}

// -----

// CHECK-LABEL: func @shape_identities
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>)
func.func @shape_identities(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
  %0 = ober.reduce_sum %x {axes = array<i64>, keepdims = false} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = ober.reshape %x : tensor<2x3xf32> to tensor<2x3xf32>
  %2 = ober.transpose %x {permutation = array<i64: 0, 1>} : tensor<2x3xf32> -> tensor<2x3xf32>
  %3 = ober.broadcast_to %x : tensor<2x3xf32> to tensor<2x3xf32>
  %4 = ober.concat %x {axis = 0 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %5 = ober.slice %x {starts = array<i64: 0, 0>, limits = array<i64: 2, 3>, strides = array<i64: 1, 1>} : tensor<2x3xf32> -> tensor<2x3xf32>
  %6 = ober.split %x {axis = 1 : i64, sizes = array<i64: 3>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %7 = ober.pad %x {low = array<i64: 0, 0>, high = array<i64: 0, 0>, mode = #ober.pad_mode<constant>, value = 1.0 : f64} : tensor<2x3xf32> -> tensor<2x3xf32>
  // CHECK-NOT: ober.
  // CHECK: return %[[X]], %[[X]], %[[X]], %[[X]], %[[X]], %[[X]], %[[X]], %[[X]]
  return %0, %1, %2, %3, %4, %5, %6, %7 : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func @reshape_chain
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4xf32>)
func.func @reshape_chain(%x: tensor<2x3x4xf32>) -> (tensor<4x6xf32>, tensor<2x3x4xf32>) {
  // CHECK: %[[R:.*]] = ober.reshape %[[X]] : tensor<2x3x4xf32> to tensor<4x6xf32>
  %0 = ober.reshape %x : tensor<2x3x4xf32> to tensor<24xf32>
  %1 = ober.reshape %0 : tensor<24xf32> to tensor<4x6xf32>
  %2 = ober.reshape %1 : tensor<4x6xf32> to tensor<2x3x4xf32>
  // CHECK: return %[[R]], %[[X]]
  return %1, %2 : tensor<4x6xf32>, tensor<2x3x4xf32>
}

// -----

// CHECK-LABEL: func @transpose_chain
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4xf32>)
func.func @transpose_chain(%x: tensor<2x3x4xf32>) -> (tensor<3x2x4xf32>, tensor<2x3x4xf32>) {
  %0 = ober.transpose %x {permutation = array<i64: 2, 0, 1>} : tensor<2x3x4xf32> -> tensor<4x2x3xf32>
  // CHECK: %[[T:.*]] = ober.transpose %[[X]] {permutation = array<i64: 1, 0, 2>} : tensor<2x3x4xf32> -> tensor<3x2x4xf32>
  %1 = ober.transpose %0 {permutation = array<i64: 2, 1, 0>} : tensor<4x2x3xf32> -> tensor<3x2x4xf32>
  %2 = ober.transpose %0 {permutation = array<i64: 1, 2, 0>} : tensor<4x2x3xf32> -> tensor<2x3x4xf32>
  // CHECK: return %[[T]], %[[X]]
  return %1, %2 : tensor<3x2x4xf32>, tensor<2x3x4xf32>
}

// -----

// CHECK-LABEL: func @constant_shapes
func.func @constant_shapes() -> (tensor<2x2xf32>, tensor<3x2xf32>, tensor<2x4xf32>, tensor<1x4xf32>) {
  %c = ober.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %s = ober.constant dense<5.0> : tensor<2xf32>
  // CHECK-DAG: ober.constant dense<{{\[}}[1.000000e+00, 2.000000e+00], [3.000000e+00, 4.000000e+00]]> : tensor<2x2xf32>
  %0 = ober.reshape %c : tensor<4xf32> to tensor<2x2xf32>
  // CHECK-DAG: ober.constant dense<5.000000e+00> : tensor<3x2xf32>
  %1 = ober.broadcast_to %s : tensor<2xf32> to tensor<3x2xf32>
  // CHECK-DAG: ober.constant dense<5.000000e+00> : tensor<2x4xf32>
  %b = ober.broadcast_to %s : tensor<2xf32> to tensor<4x2xf32>
  %2 = ober.transpose %b {permutation = array<i64: 1, 0>} : tensor<4x2xf32> -> tensor<2x4xf32>
  // CHECK-DAG: ober.constant dense<5.000000e+00> : tensor<1x4xf32>
  %3 = ober.slice %2 {starts = array<i64: 1, 0>, limits = array<i64: 2, 4>, strides = array<i64: 1, 1>} : tensor<2x4xf32> -> tensor<1x4xf32>
  // CHECK-NOT: ober.broadcast_to
  // CHECK-NOT: ober.transpose
  // CHECK-NOT: ober.slice
  return %0, %1, %2, %3 : tensor<2x2xf32>, tensor<3x2xf32>, tensor<2x4xf32>, tensor<1x4xf32>
}

// -----

// CHECK-LABEL: func @zero_dropout
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>, %{{.*}}: tensor<i64>)
func.func @zero_dropout(%x: tensor<4xf32>, %seed: tensor<i64>) -> (tensor<4xf32>, tensor<4xi1>) {
  // CHECK: %[[M:.*]] = ober.constant dense<true> : tensor<4xi1>
  %0:2 = ober.dropout %x, %seed {ratio = 0.0 : f64} : (tensor<4xf32>, tensor<i64>) -> (tensor<4xf32>, tensor<4xi1>)
  // CHECK: return %[[X]], %[[M]]
  return %0#0, %0#1 : tensor<4xf32>, tensor<4xi1>
}

// -----

// CHECK-LABEL: func @real_dropout
func.func @real_dropout(%x: tensor<4xf32>, %seed: tensor<i64>) -> tensor<4xf32> {
  // CHECK: ober.dropout
  %0:2 = ober.dropout %x, %seed {ratio = 0.5 : f64} : (tensor<4xf32>, tensor<i64>) -> (tensor<4xf32>, tensor<4xi1>)
  return %0#0 : tensor<4xf32>
}
