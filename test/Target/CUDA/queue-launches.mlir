// RUN: ober-opt %s --pass-pipeline="builtin.module(func.func(ober-cuda-queue-launches))" | FileCheck %s

// Every launch, in loops too, queues on the stream taken at entry; the
// host waits for it once, before the return. A function without launches
// is left alone.
// CHECK-LABEL: func.func @step
// CHECK: %[[STREAM:.*]] = gpu.wait async
// CHECK: gpu.launch_func async [%[[STREAM]]] @kernels::@scale
// CHECK: scf.for
// CHECK:   gpu.launch_func async [%[[STREAM]]] @kernels::@scale
// CHECK: }
// CHECK: call @ober_rt_cuda_matmul
// CHECK: gpu.launch_func async [%[[STREAM]]] @kernels::@scale
// CHECK-NEXT: gpu.wait [%[[STREAM]]]
// CHECK-NEXT: return
// CHECK-LABEL: func.func @host_only
// CHECK-NOT: gpu.wait
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @scale(%x: memref<64xf32>) kernel {
      %i = gpu.thread_id x
      %v = memref.load %x[%i] : memref<64xf32>
      %w = arith.addf %v, %v : f32
      memref.store %w, %x[%i] : memref<64xf32>
      gpu.return
    }
  }
  func.func private @ober_rt_cuda_matmul(memref<64xf32>)
  func.func @step(%x: memref<64xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c64 = arith.constant 64 : index
    gpu.launch_func @kernels::@scale blocks in (%c1, %c1, %c1) threads in (%c64, %c1, %c1) args(%x : memref<64xf32>)
    scf.for %i = %c0 to %c4 step %c1 {
      gpu.launch_func @kernels::@scale blocks in (%c1, %c1, %c1) threads in (%c64, %c1, %c1) args(%x : memref<64xf32>)
    }
    call @ober_rt_cuda_matmul(%x) : (memref<64xf32>) -> ()
    gpu.launch_func @kernels::@scale blocks in (%c1, %c1, %c1) threads in (%c64, %c1, %c1) args(%x : memref<64xf32>)
    return
  }
  func.func @host_only(%x: memref<64xf32>) {
    call @ober_rt_cuda_matmul(%x) : (memref<64xf32>) -> ()
    return
  }
}
