// Constants kernels read become device buffers: a splat is filled by a
// kernel, any other constant copied from the host image; a runtime
// library call's descriptor (its first operand) stays on the host, its
// other operands are device buffers.
// RUN: ober-opt %s --ober-cuda-constants-on-device | FileCheck %s
// The CUDA mapping run on the CPU (test-ober-cuda-launches-on-host) makes
// each upload a host copy from the constant.
// RUN: ober-opt %s --ober-cuda-constants-on-device --test-ober-cuda-launches-on-host | FileCheck %s --check-prefix=HOST

memref.global "private" constant @zeros : memref<4x4xf32> = dense<0.0>
memref.global "private" constant @table : memref<3xi64> = dense<[1, 2, 3]>
memref.global "private" constant @desc : memref<2xi64> = dense<[7, 8]>
func.func private @ober_rt_library(memref<*xi64>, memref<*xi64>)

// CHECK-LABEL: func.func @reads
// CHECK: %[[ZEROS:.*]] = memref.alloc() : memref<4x4xf32>
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[ZEROS]] : memref<4x4xf32>)
// CHECK: %[[TABLE:.*]] = memref.alloc() : memref<3xi64>
// CHECK: call @ober_rt_cuda_upload_64bit(
// CHECK: %[[DESC:.*]] = memref.get_global @desc
// CHECK: %[[ON_DEVICE:.*]] = memref.alloc() : memref<2xi64>
// CHECK: call @ober_rt_cuda_upload_64bit(
// CHECK: %[[CAST:.*]] = memref.cast %[[DESC]]
// CHECK: %[[OPERAND:.*]] = memref.cast %[[ON_DEVICE]]
// CHECK: call @ober_rt_library(%[[CAST]], %[[OPERAND]])
// CHECK: linalg.copy ins(%[[ZEROS]] : memref<4x4xf32>)
// CHECK: linalg.copy ins(%[[TABLE]] : memref<3xi64>)
// HOST-LABEL: func.func @reads
// HOST: %[[T:.*]] = memref.get_global @table
// HOST: %[[TABLE:.*]] = memref.alloc() : memref<3xi64>
// HOST-NOT: call @ober_rt_cuda_upload
// HOST: memref.copy %[[T]], %[[TABLE]] : memref<3xi64> to memref<3xi64>
// HOST: %[[D:.*]] = memref.get_global @desc
// HOST: %[[ON_DEVICE:.*]] = memref.alloc() : memref<2xi64>
// HOST-NEXT: memref.cast
// HOST-NEXT: memref.cast
// HOST-NEXT: memref.copy %[[D]], %[[ON_DEVICE]] : memref<2xi64> to memref<2xi64>
// HOST-NOT: call @ober_rt_cuda_upload
// HOST: return
func.func @reads(%a: memref<4x4xf32>, %b: memref<3xi64>) {
  %z = memref.get_global @zeros : memref<4x4xf32>
  %t = memref.get_global @table : memref<3xi64>
  %d = memref.get_global @desc : memref<2xi64>
  %c = memref.cast %d : memref<2xi64> to memref<*xi64>
  %o = memref.cast %d : memref<2xi64> to memref<*xi64>
  call @ober_rt_library(%c, %o) : (memref<*xi64>, memref<*xi64>) -> ()
  linalg.copy ins(%z : memref<4x4xf32>) outs(%a : memref<4x4xf32>)
  linalg.copy ins(%t : memref<3xi64>) outs(%b : memref<3xi64>)
  return
}
