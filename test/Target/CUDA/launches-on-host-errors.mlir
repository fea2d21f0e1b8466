// test-ober-cuda-launches-on-host copies a constant to its device buffer
// on the host only between casts of ranked buffers, as
// ober-cuda-constants-on-device makes them.
// RUN: ober-opt %s --test-ober-cuda-launches-on-host -verify-diagnostics --split-input-file

func.func private @ober_rt_cuda_upload_32bit(memref<*xf32>, memref<*xf32>)

func.func @unranked(%dst: memref<*xf32>, %src: memref<*xf32>) {
  // expected-error @below {{copies to the device on the host only from and to casts of ranked buffers}}
  call @ober_rt_cuda_upload_32bit(%dst, %src) : (memref<*xf32>, memref<*xf32>) -> ()
  return
}

// -----

func.func private @ober_rt_cuda_upload_copy(memref<*xf32>)

func.func @one_operand(%dst: memref<4xf32>) {
  %d = memref.cast %dst : memref<4xf32> to memref<*xf32>
  // expected-error @below {{copies to the device on the host only from and to casts of ranked buffers}}
  call @ober_rt_cuda_upload_copy(%d) : (memref<*xf32>) -> ()
  return
}
