// RUN: ober-opt %s --convert-ober-to-linalg --split-input-file | FileCheck %s

// A 2-D convolution with a bias calls the kernel library with its geometry:
// spatial 2, n 2, c 3, o 4, groups 1, bias; then in 8x8, kernel 3x3, out
// 4x4, stride 2x2, dilation 1x1, pads begin 1x1 and end 0x0.
// CHECK: memref.global "private" constant @__ober_rt_cpu_conv_desc0 : memref<20xi64> = dense<[2, 2, 3, 4, 1, 1, 8, 8, 3, 3, 4, 4, 2, 2, 1, 1, 1, 1, 0, 0]>
// CHECK-LABEL: func.func @conv
// CHECK: call @ober_rt_cpu_conv(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (memref<*xi64>, memref<*xf32>, memref<*xf32>, memref<*xf32>, memref<*xf32>) -> ()
func.func @conv(%x: tensor<2x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>) -> tensor<2x4x4x4xf32> {
  %0 = ober.conv %x, %w, %b {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 0, 0>, dilations = array<i64: 1, 1>, groups = 1 : i64} : (tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<2x4x4x4xf32>
  return %0 : tensor<2x4x4x4xf32>
}

// -----

// The data gradient of a stride-2 convolution of an 8-long input (the
// conv_transpose back with output padding 1): the kernel computes the 7
// positions the windows reach (in 7 in the descriptor, no trailing pad),
// and the eighth, which no window reads, is zero; the bias is added after.
// CHECK: memref.global "private" constant @__ober_rt_cpu_conv_backward_data_desc0 : memref<13xi64> = dense<[1, 2, 3, 4, 1, 0, 7, 3, 3, 2, 1, 0, 0]>
// CHECK-LABEL: func.func @data_grad
// CHECK: call @ober_rt_cpu_conv_backward_data(
// CHECK: tensor.pad %{{.*}} low[0, 0, 0] high[0, 0, 1]
// CHECK: linalg.generic
// CHECK: arith.addf
func.func @data_grad(%gy: tensor<2x4x3xf32>, %w: tensor<4x3x3xf32>, %b: tensor<3xf32>) -> tensor<2x3x8xf32> {
  %0 = ober.conv_transpose %gy, %w, %b {strides = array<i64: 2>, padding = array<i64: 0, 0>, dilations = array<i64: 1>, output_padding = array<i64: 1>, groups = 1 : i64} : (tensor<2x4x3xf32>, tensor<4x3x3xf32>, tensor<3xf32>) -> tensor<2x3x8xf32>
  return %0 : tensor<2x3x8xf32>
}

// -----

// The weight gradient of the same convolution reads the 7 positions its
// windows reach: the eighth input position is cut.
// CHECK: memref.global "private" constant @__ober_rt_cpu_conv_backward_weights_desc0 : memref<13xi64> = dense<[1, 2, 3, 4, 1, 0, 7, 3, 3, 2, 1, 0, 0]>
// CHECK-LABEL: func.func @weight_grad
// CHECK: tensor.extract_slice %{{.*}}[0, 0, 0] [2, 3, 7] [1, 1, 1] : tensor<2x3x8xf32> to tensor<2x3x7xf32>
// CHECK: call @ober_rt_cpu_conv_backward_weights(
func.func @weight_grad(%x: tensor<2x3x8xf32>, %gy: tensor<2x4x3xf32>) -> tensor<4x3x3xf32> {
  %0 = ober.conv_weight_grad %x, %gy {kernel = array<i64: 3>, strides = array<i64: 2>, padding = array<i64: 0, 0>, dilations = array<i64: 1>, groups = 1 : i64} : (tensor<2x3x8xf32>, tensor<2x4x3xf32>) -> tensor<4x3x3xf32>
  return %0 : tensor<4x3x3xf32>
}
