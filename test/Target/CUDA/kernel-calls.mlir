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

// Collectives stay: the executable runs them on the device through NCCL.
// CHECK-LABEL: func.func @reduce
// CHECK: call @ober_rt_coll_start_float32(
// CHECK: call @ober_rt_coll_wait_float32(
memref.global "private" constant @__coll_desc0 : memref<9xi64> = dense<[0, 0, 1, 0, 0, 0, 0, 1, 4]>
func.func private @ober_rt_coll_start_float32(memref<*xi64>, memref<*xf32>, memref<*xf32>) -> i64 attributes {llvm.emit_c_interface}
func.func private @ober_rt_coll_wait_float32(i64, memref<*xf32>, memref<*xf32>) attributes {llvm.emit_c_interface}
func.func @reduce(%x: memref<*xf32>, %y: memref<*xf32>) {
  %g = memref.get_global @__coll_desc0 : memref<9xi64>
  %d = memref.cast %g : memref<9xi64> to memref<*xi64>
  %h = call @ober_rt_coll_start_float32(%d, %x, %y) : (memref<*xi64>, memref<*xf32>, memref<*xf32>) -> i64
  call @ober_rt_coll_wait_float32(%h, %x, %y) : (i64, memref<*xf32>, memref<*xf32>) -> ()
  return
}

// -----

// Pipeline transfers (kind 6, send; 7, recv) stay too: NcclTransport
// keeps a communicator and a stream per pair of pipeline peers.
// CHECK-LABEL: func.func @transfer
// CHECK: call @ober_rt_coll_start_float32(%{{.*}}, %[[X:.*]], %
// CHECK: call @ober_rt_coll_start_float32(
memref.global "private" constant @__coll_desc0 : memref<9xi64> = dense<[6, 0, 1, 0, 0, 0, 0, 1, 4]>
memref.global "private" constant @__coll_desc1 : memref<9xi64> = dense<[7, 0, 1, 0, 0, 0, 0, 1, 4]>
func.func private @ober_rt_coll_start_float32(memref<*xi64>, memref<*xf32>, memref<*xf32>) -> i64 attributes {llvm.emit_c_interface}
func.func @transfer(%x: memref<*xf32>, %y: memref<*xf32>) -> (i64, i64) {
  %g = memref.get_global @__coll_desc0 : memref<9xi64>
  %d = memref.cast %g : memref<9xi64> to memref<*xi64>
  %h = call @ober_rt_coll_start_float32(%d, %x, %y) : (memref<*xi64>, memref<*xf32>, memref<*xf32>) -> i64
  %g1 = memref.get_global @__coll_desc1 : memref<9xi64>
  %d1 = memref.cast %g1 : memref<9xi64> to memref<*xi64>
  %h1 = call @ober_rt_coll_start_float32(%d1, %x, %y) : (memref<*xi64>, memref<*xf32>, memref<*xf32>) -> i64
  return %h, %h1 : i64, i64
}
