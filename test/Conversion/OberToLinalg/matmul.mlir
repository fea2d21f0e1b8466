// RUN: ober-opt %s --convert-ober-to-linalg --split-input-file | FileCheck %s
// RUN: ober-opt %s --convert-ober-to-linalg="low-precision-products=true" --split-input-file | FileCheck %s --check-prefix=LOW

// Activations times a weight: batch and rows become the rows of one call of
// the kernel library's matrix product (descriptor: batch 1, m 128, n 64,
// k 32, nothing transposed); operands go as read-only dense buffers, the
// result into a new one. The module lists the kernel and its descriptor
// for the executable to create ahead of its first step.
// CHECK: module attributes {ober_cpu.kernels = [{desc = array<i64: 1, 1, 1, 128, 64, 32, 0, 0, 2>, name = "ober_rt_cpu_matmul"}]}
// CHECK-DAG: memref.global "private" constant @[[D:__ober_rt_cpu_matmul_desc[0-9]+]] : memref<9xi64> = dense<[1, 1, 1, 128, 64, 32, 0, 0, 2]>
// CHECK-DAG: func.func private @ober_rt_cpu_matmul(memref<*xi64>, memref<*xf32>, memref<*xf32>, memref<*xf32>) attributes {llvm.emit_c_interface}
// CHECK-LABEL: func.func @dense
// CHECK: %[[X:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0, 1], [2]] : tensor<8x16x32xf32> into tensor<128x32xf32>
// CHECK: memref.get_global @[[D]]
// CHECK: bufferization.to_buffer %[[X]] read_only : tensor<128x32xf32> to memref<128x32xf32>
// CHECK: %[[OUT:.*]] = memref.alloc() {alignment = 64 : i64} : memref<128x64xf32>
// CHECK: call @ober_rt_cpu_matmul(
// CHECK: bufferization.to_tensor %[[OUT]] restrict writable
// CHECK: tensor.expand_shape {{.*}} into tensor<8x16x64xf32>
func.func @dense(%x: tensor<8x16x32xf32>, %w: tensor<32x64xf32>) -> tensor<8x16x64xf32> {
  %0 = ober.matmul %x, %w : (tensor<8x16x32xf32>, tensor<32x64xf32>) -> tensor<8x16x64xf32>
  return %0 : tensor<8x16x64xf32>
}

// -----

// A weight gradient x^T @ g: the transpose is not materialized, the kernel
// reads x transposed (flag 1 in the descriptor).
// CHECK: memref.global "private" constant @{{.*}} : memref<9xi64> = dense<[1, 1, 1, 32, 64, 128, 1, 0, 2]>
// CHECK-LABEL: func.func @weight_grad
// CHECK-NOT: linalg.transpose
// CHECK: bufferization.to_buffer %{{.*}} read_only : tensor<1x128x32xf32> to memref<1x128x32xf32>
// CHECK: call @ober_rt_cpu_matmul(
func.func @weight_grad(%x: tensor<128x32xf32>, %g: tensor<128x64xf32>) -> tensor<32x64xf32> {
  %t = ober.transpose %x {permutation = array<i64: 1, 0>} : tensor<128x32xf32> -> tensor<32x128xf32>
  %0 = ober.matmul %t, %g : (tensor<32x128xf32>, tensor<128x64xf32>) -> tensor<32x64xf32>
  return %0 : tensor<32x64xf32>
}

// -----

// Attention scores: batch dimensions collapse into one batch of 8; bf16
// operands are widened to f32 and the result rounded once.
// CHECK: dense<[8, 8, 8, 4, 4, 16, 0, 0, 2]>
// CHECK-LABEL: func.func @scores
// CHECK: arith.extf %{{.*}} : bf16 to f32
// CHECK: call @ober_rt_cpu_matmul(
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK: into tensor<2x4x4x4xbf16>
// With low-precision-products (the CUDA pipeline's: cuBLASLt multiplies
// bf16 on tensor cores, accumulating in f32) the buffers stay bf16 and the
// descriptor says so (dtype 1: bf16), the call is declared for bf16
// buffers (ober_rt_cpu_matmul_bf16); nothing is widened or rounded.
// LOW: dense<[8, 8, 8, 4, 4, 16, 0, 0, 1]>
// LOW-LABEL: func.func @scores
// LOW-NOT: arith.extf
// LOW: call @ober_rt_cpu_matmul_bf16({{.*}}) : (memref<*xi64>, memref<*xbf16>, memref<*xbf16>, memref<*xbf16>) -> ()
// LOW-NOT: arith.truncf
// LOW: return
func.func @scores(%q: tensor<2x4x4x16xbf16>, %k: tensor<2x4x16x4xbf16>) -> tensor<2x4x4x4xbf16> {
  %0 = ober.matmul %q, %k : (tensor<2x4x4x16xbf16>, tensor<2x4x16x4xbf16>) -> tensor<2x4x4x4xbf16>
  return %0 : tensor<2x4x4x4xbf16>
}

// -----

// A vector on the left is one shared row; the right's batch is the
// kernel's (a batch of 1 against 3).
// CHECK: dense<[3, 1, 3, 1, 2, 5, 0, 0, 2]>
// CHECK-LABEL: func.func @vector_batch
// CHECK-NOT: linalg.generic
// CHECK: call @ober_rt_cpu_matmul(
// CHECK: into tensor<3x2xf32>
func.func @vector_batch(%v: tensor<5xf32>, %m: tensor<3x5x2xf32>) -> tensor<3x2xf32> {
  %0 = ober.matmul %v, %m : (tensor<5xf32>, tensor<3x5x2xf32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----

// Batches that broadcast against each other are materialized.
// CHECK: dense<[6, 6, 6, 4, 2, 5, 0, 0, 2]>
// CHECK-LABEL: func.func @mixed
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<2x1x4x5xf32>) outs(%{{.*}} : tensor<2x3x4x5xf32>)
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<1x3x5x2xf32>) outs(%{{.*}} : tensor<2x3x5x2xf32>)
// CHECK: call @ober_rt_cpu_matmul(
func.func @mixed(%a: tensor<2x1x4x5xf32>, %b: tensor<1x3x5x2xf32>) -> tensor<2x3x4x2xf32> {
  %0 = ober.matmul %a, %b : (tensor<2x1x4x5xf32>, tensor<1x3x5x2xf32>) -> tensor<2x3x4x2xf32>
  return %0 : tensor<2x3x4x2xf32>
}

// -----

// Integers are generated.
// CHECK-LABEL: func.func @ints
// CHECK-NOT: call
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<4x5xi64>, tensor<5x2xi64>) outs(%{{.*}} : tensor<4x2xi64>)
func.func @ints(%a: tensor<4x5xi64>, %b: tensor<5x2xi64>) -> tensor<4x2xi64> {
  %0 = ober.matmul %a, %b : (tensor<4x5xi64>, tensor<5x2xi64>) -> tensor<4x2xi64>
  return %0 : tensor<4x2xi64>
}

// -----

// The sum over a batch of x[b]^T @ y[b] (the gradient of a weight the batch
// shares) is one product over the batch's rows, x read transposed.
// CHECK: dense<[1, 1, 1, 4, 2, 15, 1, 0, 2]>
// CHECK-LABEL: func.func @batch_sum
// CHECK: tensor.collapse_shape %{{.*}} : tensor<3x5x4xf32> into tensor<15x4xf32>
// CHECK: call @ober_rt_cpu_matmul(
// CHECK-NOT: linalg.generic
func.func @batch_sum(%x: tensor<3x5x4xf32>, %y: tensor<3x5x2xf32>) -> tensor<4x2xf32> {
  %t = ober.transpose %x {permutation = array<i64: 0, 2, 1>} : tensor<3x5x4xf32> -> tensor<3x4x5xf32>
  %m = ober.matmul %t, %y : (tensor<3x4x5xf32>, tensor<3x5x2xf32>) -> tensor<3x4x2xf32>
  %s = ober.reduce_sum %m {axes = array<i64: 0>, keepdims = false} : (tensor<3x4x2xf32>) -> tensor<4x2xf32>
  return %s : tensor<4x2xf32>
}
