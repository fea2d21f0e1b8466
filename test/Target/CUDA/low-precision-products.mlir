// On CUDA, bf16 and f16 matrix products go to cuBLASLt in their own type
// (tensor cores, f32 accumulation, the result rounded once): the library
// call takes bf16 buffers, its descriptor says bf16 (last field, 1), and
// nothing widens the operands to f32 first. An f32 product stays f32.
// REQUIRES: cuda
// RUN: ober-opt %s --ober-cuda-pipeline="chips=sm_90" --mlir-print-ir-after=ober-cuda-kernel-calls -o /dev/null 2>&1 | FileCheck %s
// CHECK-DAG: memref.global "private" constant @{{.*}} : memref<9xi64> = dense<[1, 1, 1, 64, 32, 16, 0, 0, 1]>
// CHECK-DAG: memref.global "private" constant @{{.*}} : memref<9xi64> = dense<[1, 1, 1, 64, 32, 16, 0, 0, 2]>
// CHECK-LABEL: func.func @bf16
// CHECK: call @ober_rt_cuda_matmul_bf16({{.*}}) : (memref<*xi64>, memref<*xbf16>, memref<*xbf16>, memref<*xbf16>) -> ()
// CHECK-LABEL: func.func @f32
// CHECK: call @ober_rt_cuda_matmul({{.*}}) : (memref<*xi64>, memref<*xf32>, memref<*xf32>, memref<*xf32>) -> ()
func.func @bf16(%x: tensor<64x16xbf16>, %w: tensor<16x32xbf16>) -> tensor<64x32xbf16> {
  %y = ober.matmul %x, %w : (tensor<64x16xbf16>, tensor<16x32xbf16>) -> tensor<64x32xbf16>
  return %y : tensor<64x32xbf16>
}
func.func @f32(%x: tensor<64x16xf32>, %w: tensor<16x32xf32>) -> tensor<64x32xf32> {
  %y = ober.matmul %x, %w : (tensor<64x16xf32>, tensor<16x32xf32>) -> tensor<64x32xf32>
  return %y : tensor<64x32xf32>
}
