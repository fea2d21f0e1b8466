// Matrix products call the CUDA kernel library; other library kernels have
// no CUDA version (convolutions reach the CUDA target as GEMMs, lowered with
// convolutions=gemm) and are refused at the call.
// RUN: ober-opt %s --split-input-file --ober-cuda-kernel-calls --verify-diagnostics | FileCheck %s

// CHECK: func.func private @ober_rt_cuda_matmul(
// CHECK-LABEL: func.func @product
// CHECK: call @ober_rt_cuda_matmul(
func.func private @ober_rt_cpu_matmul(memref<*xi64>, memref<*xf32>, memref<*xf32>, memref<*xf32>) attributes {llvm.emit_c_interface}
func.func @product(%d: memref<*xi64>, %a: memref<*xf32>, %b: memref<*xf32>, %c: memref<*xf32>) {
  call @ober_rt_cpu_matmul(%d, %a, %b, %c) : (memref<*xi64>, memref<*xf32>, memref<*xf32>, memref<*xf32>) -> ()
  return
}

// -----

func.func private @ober_rt_cpu_conv(memref<*xi64>, memref<*xf32>, memref<*xf32>, memref<*xf32>, memref<*xf32>) attributes {llvm.emit_c_interface}
func.func @convolution(%d: memref<*xi64>, %x: memref<*xf32>, %w: memref<*xf32>, %b: memref<*xf32>, %y: memref<*xf32>) {
  // expected-error @below {{'ober_rt_cpu_conv' has no CUDA kernel (the CUDA target runs matrix products through cuBLASLt and lowers convolutions with convolutions=gemm)}}
  call @ober_rt_cpu_conv(%d, %x, %w, %b, %y) : (memref<*xi64>, memref<*xf32>, memref<*xf32>, memref<*xf32>, memref<*xf32>) -> ()
  return
}

// -----

func.func private @ober_rt_coll_start_float32(memref<*xi64>, memref<*xf32>, memref<*xf32>) -> i64 attributes {llvm.emit_c_interface}
func.func @reduce(%d: memref<*xi64>, %x: memref<*xf32>, %y: memref<*xf32>) -> i64 {
  // expected-error @below {{collectives and pipeline transfers are not wired to NCCL on the CUDA target yet}}
  %h = call @ober_rt_coll_start_float32(%d, %x, %y) : (memref<*xi64>, memref<*xf32>, memref<*xf32>) -> i64
  return %h : i64
}
