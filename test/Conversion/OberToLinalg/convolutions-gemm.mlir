// RUN: ober-opt %s --convert-ober-to-linalg=convolutions=gemm --split-input-file | FileCheck %s
// RUN: ober-opt %s --convert-ober-to-linalg="convolutions=gemm low-precision-products=true" --split-input-file | FileCheck %s --check-prefix=LOW
// RUN: not ober-opt %s --convert-ober-to-linalg=convolutions=fft --split-input-file 2>&1 | FileCheck %s --check-prefix=BAD

// BAD: error: convert-ober-to-linalg: convolutions='fft' is not one of library, gemm

// Convolutions as matrix products (what the CUDA target compiles): no
// convolution kernel, one product per group. Two groups of 2 input and 3
// output channels, a 3x3 kernel at stride 2 over 8x8 padded at the start:
// the windows of the padded input gathered into columns [2, 2 * 9, 2 * 16],
// the weight [2, 3, 18] times them (batch 2, m 3, n 32, k 18), then the
// channels moved back behind the images with the bias added.
// CHECK: #[[IM2COL:map[0-9]*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d0 * 2 + d1, d5 * 2 + d2, d6 * 2 + d3)>
// CHECK-NOT: ober_rt_cpu_conv
// CHECK: memref.global "private" constant @{{.*}} : memref<9xi64> = dense<[2, 2, 2, 3, 32, 18, 0, 0, 2]>
// CHECK-LABEL: func.func @conv
// CHECK: tensor.pad %{{.*}} low[0, 0, 1, 1] high[0, 0, 0, 0]
// CHECK: linalg.generic {indexing_maps = [#[[IM2COL]],
// CHECK: tensor.collapse_shape %{{.*}} {{\[}}[0], [1, 2, 3], [4, 5, 6]] : tensor<2x2x3x3x2x4x4xf32> into tensor<2x18x32xf32>
// CHECK: call @ober_rt_cpu_matmul(
// CHECK-SAME: (memref<*xi64>, memref<*xf32>, memref<*xf32>, memref<*xf32>) -> ()
// CHECK: linalg.generic
// CHECK: arith.addf
// CHECK: tensor.collapse_shape %{{.*}} into tensor<2x6x4x4xf32>
func.func @conv(%x: tensor<2x4x8x8xf32>, %w: tensor<6x2x3x3xf32>, %b: tensor<6xf32>) -> tensor<2x6x4x4xf32> {
  %0 = ober.conv %x, %w, %b {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 0, 0>, dilations = array<i64: 1, 1>, groups = 2 : i64} : (tensor<2x4x8x8xf32>, tensor<6x2x3x3xf32>, tensor<6xf32>) -> tensor<2x6x4x4xf32>
  return %0 : tensor<2x6x4x4xf32>
}

// -----

// The data gradient: the weight transposed times the output gradient with
// its channels first (desc: batch 1, m 9, n 6, k 4, A transposed), then
// each of the 8 input positions gathers, over the 3 kernel positions, the
// column of the window that reads it (none for the eighth); the bias after.
// CHECK-DAG: memref.global "private" constant @{{.*}} : memref<9xi64> = dense<[1, 1, 1, 9, 6, 4, 1, 0, 2]>
// CHECK-LABEL: func.func @data_grad
// CHECK: linalg.transpose ins(%{{.*}} : tensor<2x1x4x3xf32>) outs(%{{.*}} : tensor<1x4x2x3xf32>) permutation = [1, 2, 0, 3]
// CHECK: call @ober_rt_cpu_matmul(
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "reduction"]
// CHECK: arith.remsi
// CHECK: tensor.extract %{{.*}} : tensor<1x3x3x2x3xf32>
// CHECK: arith.select
// CHECK: linalg.generic
// CHECK: arith.addf
// CHECK: return %{{.*}} : tensor<2x3x8xf32>
func.func @data_grad(%gy: tensor<2x4x3xf32>, %w: tensor<4x3x3xf32>, %b: tensor<3xf32>) -> tensor<2x3x8xf32> {
  %0 = ober.conv_transpose %gy, %w, %b {strides = array<i64: 2>, padding = array<i64: 0, 0>, dilations = array<i64: 1>, output_padding = array<i64: 1>, groups = 1 : i64} : (tensor<2x4x3xf32>, tensor<4x3x3xf32>, tensor<3xf32>) -> tensor<2x3x8xf32>
  return %0 : tensor<2x3x8xf32>
}

// -----

// The weight gradient in bf16: the output gradient with its channels first
// times the columns read transposed (desc: m 4, n 9, k 6, B transposed), in
// f32, rounded once; the product's [1, 4, 9] is the weight's layout.
// CHECK-DAG: memref.global "private" constant @{{.*}} : memref<9xi64> = dense<[1, 1, 1, 4, 9, 6, 0, 1, 2]>
// CHECK-LABEL: func.func @weight_grad
// CHECK: tensor.collapse_shape %{{.*}} : tensor<1x3x3x2x3xbf16> into tensor<1x9x6xbf16>
// CHECK: call @ober_rt_cpu_matmul(
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK: return %{{.*}} : tensor<4x3x3xbf16>
func.func @weight_grad(%x: tensor<2x3x8xbf16>, %gy: tensor<2x4x3xbf16>) -> tensor<4x3x3xbf16> {
  %0 = ober.conv_weight_grad %x, %gy {kernel = array<i64: 3>, strides = array<i64: 2>, padding = array<i64: 0, 0>, dilations = array<i64: 1>, groups = 1 : i64} : (tensor<2x3x8xbf16>, tensor<2x4x3xbf16>) -> tensor<4x3x3xbf16>
  return %0 : tensor<4x3x3xbf16>
}

// -----

// bf16 with low-precision-products (the CUDA target's): the columns stay
// bf16 and every product is a bf16 call (dtype 1 in the descriptor;
// cuBLASLt accumulates in f32 and rounds once); the forward widens the
// product to add the bias, the data gradient sums the windows' columns in
// f32, each result rounded once more.
// LOW-DAG: memref.global "private" constant @{{.*}} : memref<9xi64> = dense<[2, 2, 2, 3, 32, 18, 0, 0, 1]>
// LOW-DAG: memref.global "private" constant @{{.*}} : memref<9xi64> = dense<[2, 2, 2, 18, 32, 3, 1, 0, 1]>
// LOW-DAG: memref.global "private" constant @{{.*}} : memref<9xi64> = dense<[2, 2, 2, 3, 18, 32, 0, 1, 1]>
// LOW-LABEL: func.func @conv_bf16
// LOW: tensor.collapse_shape %{{.*}} : tensor<2x2x3x3x2x4x4xbf16> into tensor<2x18x32xbf16>
// LOW: call @ober_rt_cpu_matmul_bf16({{.*}}) : (memref<*xi64>, memref<*xbf16>, memref<*xbf16>, memref<*xbf16>) -> ()
// LOW: arith.extf %{{.*}} : bf16 to f32
// LOW: arith.addf
// LOW: arith.truncf %{{.*}} : f32 to bf16
// LOW: call @ober_rt_cpu_matmul_bf16(
// LOW: tensor.extract %{{.*}} : tensor<2x2x3x3x2x4x4xbf16>
// LOW-NEXT: arith.extf %{{.*}} : bf16 to f32
// LOW: call @ober_rt_cpu_matmul_bf16(
// LOW-NOT: arith.truncf
// LOW: return
// LOW-NOT: call @ober_rt_cpu_matmul(
func.func @conv_bf16(%x: tensor<2x4x8x8xbf16>, %w: tensor<6x2x3x3xbf16>, %b: tensor<6xbf16>, %gy: tensor<2x6x4x4xbf16>, %bc: tensor<4xbf16>) -> (tensor<2x6x4x4xbf16>, tensor<2x4x8x8xbf16>, tensor<6x2x3x3xbf16>) {
  %0 = ober.conv %x, %w, %b {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 0, 0>, dilations = array<i64: 1, 1>, groups = 2 : i64} : (tensor<2x4x8x8xbf16>, tensor<6x2x3x3xbf16>, tensor<6xbf16>) -> tensor<2x6x4x4xbf16>
  %1 = ober.conv_transpose %gy, %w, %bc {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 0, 0>, dilations = array<i64: 1, 1>, output_padding = array<i64: 0, 0>, groups = 2 : i64} : (tensor<2x6x4x4xbf16>, tensor<6x2x3x3xbf16>, tensor<4xbf16>) -> tensor<2x4x8x8xbf16>
  %2 = ober.conv_weight_grad %x, %gy {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 0, 0>, dilations = array<i64: 1, 1>, groups = 2 : i64} : (tensor<2x4x8x8xbf16>, tensor<2x6x4x4xbf16>) -> tensor<6x2x3x3xbf16>
  return %0, %1, %2 : tensor<2x6x4x4xbf16>, tensor<2x4x8x8xbf16>, tensor<6x2x3x3xbf16>
}
