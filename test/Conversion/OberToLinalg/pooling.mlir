// RUN: ober-opt %s --convert-ober-to-linalg --split-input-file | FileCheck %s

// Max pooling pads with -inf to cover every window (ceil mode reaches one
// more position) and folds each window with maximumf (NaN propagates).
// CHECK-LABEL: func.func @max_pool
// CHECK: %[[NEG:.*]] = arith.constant 0xFF800000 : f32
// CHECK: tensor.pad %{{.*}} low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK: tensor.yield %[[NEG]]
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]
// CHECK: arith.maximumf
func.func @max_pool(%x: tensor<1x2x7x7xf32>) -> tensor<1x2x4x4xf32> {
  %0 = ober.max_pool %x {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 0, 0>, dilations = array<i64: 1, 1>, ceil_mode = true} : (tensor<1x2x7x7xf32>) -> tensor<1x2x4x4xf32>
  return %0 : tensor<1x2x4x4xf32>
}

// -----

// Average pooling sums zero-padded windows, then divides by the count of
// real positions computed from each output position's index.
// CHECK-LABEL: func.func @avg_pool
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "reduction"]
// CHECK: arith.addf
// CHECK: linalg.generic
// CHECK: linalg.index 2
// CHECK: arith.divf
func.func @avg_pool(%x: tensor<1x2x8xf32>) -> tensor<1x2x4xf32> {
  %0 = ober.avg_pool %x {kernel = array<i64: 3>, strides = array<i64: 2>, padding = array<i64: 1, 0>, ceil_mode = false, count_include_pad = false} : (tensor<1x2x8xf32>) -> tensor<1x2x4xf32>
  return %0 : tensor<1x2x4xf32>
}

// -----

// The max-pool gradient finds each window's first maximum (index and value
// carried through the window), then every input position gathers the
// gradients of the windows whose winner it is (2 candidate windows per
// dimension here: kernel 3, stride 2).
// CHECK-LABEL: func.func @max_pool_grad
// CHECK: %{{.*}}:2 = linalg.generic
// CHECK: tensor.empty() : tensor<2x2xf32>
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]
// CHECK: arith.cmpi eq
func.func @max_pool_grad(%x: tensor<1x2x7x7xf32>, %g: tensor<1x2x3x3xf32>) -> tensor<1x2x7x7xf32> {
  %0 = ober.max_pool_grad %x, %g {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, ceil_mode = false} : (tensor<1x2x7x7xf32>, tensor<1x2x3x3xf32>) -> tensor<1x2x7x7xf32>
  return %0 : tensor<1x2x7x7xf32>
}
