// RUN: ober-opt %s --ober-cuda-merge-kernel-modules -split-input-file | FileCheck %s

// Every kernel moves into the first module; kernels that differ only in
// name are kept once (@scale and @scale_again, @scale_2 is the same body
// in another module), and their launches follow. A different constant
// (@scale_by_3) or signature (@scale_f16) keeps its own kernel; a name
// clash (@scale_by_3 twice, different bodies) is renamed.
// CHECK-LABEL: gpu.module @scale
// CHECK-COUNT-1: gpu.func @scale(
// CHECK-NOT: gpu.func @scale_again
// CHECK: gpu.func @scale_by_3(
// CHECK: gpu.func @scale_f16(
// CHECK: gpu.func @scale_by_3_0(
// CHECK-NOT: gpu.module
// CHECK-LABEL: func.func @step
// CHECK: gpu.launch_func @scale::@scale
// CHECK: gpu.launch_func @scale::@scale
// CHECK: gpu.launch_func @scale::@scale
// CHECK: gpu.launch_func @scale::@scale_by_3 
// CHECK: gpu.launch_func @scale::@scale_f16
// CHECK: gpu.launch_func @scale::@scale_by_3_0
module attributes {gpu.container_module} {
  gpu.module @scale {
    gpu.func @scale(%x: memref<64xf32>) kernel {
      %i = gpu.thread_id x
      %c = arith.constant 2.0 : f32
      %v = memref.load %x[%i] : memref<64xf32>
      %w = arith.mulf %v, %c : f32
      memref.store %w, %x[%i] : memref<64xf32>
      gpu.return
    }
    gpu.func @scale_again(%y: memref<64xf32>) kernel {
      %j = gpu.thread_id x
      %d = arith.constant 2.0 : f32
      %u = memref.load %y[%j] : memref<64xf32>
      %t = arith.mulf %u, %d : f32
      memref.store %t, %y[%j] : memref<64xf32>
      gpu.return
    }
  }
  gpu.module @scale_2 {
    gpu.func @scale_2(%x: memref<64xf32>) kernel {
      %i = gpu.thread_id x
      %c = arith.constant 2.0 : f32
      %v = memref.load %x[%i] : memref<64xf32>
      %w = arith.mulf %v, %c : f32
      memref.store %w, %x[%i] : memref<64xf32>
      gpu.return
    }
    gpu.func @scale_by_3(%x: memref<64xf32>) kernel {
      %i = gpu.thread_id x
      %c = arith.constant 3.0 : f32
      %v = memref.load %x[%i] : memref<64xf32>
      %w = arith.mulf %v, %c : f32
      memref.store %w, %x[%i] : memref<64xf32>
      gpu.return
    }
    gpu.func @scale_f16(%x: memref<64xf16>) kernel {
      %i = gpu.thread_id x
      %c = arith.constant 2.0 : f16
      %v = memref.load %x[%i] : memref<64xf16>
      %w = arith.mulf %v, %c : f16
      memref.store %w, %x[%i] : memref<64xf16>
      gpu.return
    }
  }
  gpu.module @other {
    gpu.func @scale_by_3(%x: memref<64xf32>) kernel {
      %i = gpu.thread_id x
      %c = arith.constant 3.0 : f32
      %v = memref.load %x[%i] : memref<64xf32>
      %w = arith.addf %v, %c : f32
      memref.store %w, %x[%i] : memref<64xf32>
      gpu.return
    }
  }
  func.func @step(%x: memref<64xf32>, %h: memref<64xf16>) {
    %c1 = arith.constant 1 : index
    %c64 = arith.constant 64 : index
    gpu.launch_func @scale::@scale blocks in (%c1, %c1, %c1) threads in (%c64, %c1, %c1) args(%x : memref<64xf32>)
    gpu.launch_func @scale::@scale_again blocks in (%c1, %c1, %c1) threads in (%c64, %c1, %c1) args(%x : memref<64xf32>)
    gpu.launch_func @scale_2::@scale_2 blocks in (%c1, %c1, %c1) threads in (%c64, %c1, %c1) args(%x : memref<64xf32>)
    gpu.launch_func @scale_2::@scale_by_3 blocks in (%c1, %c1, %c1) threads in (%c64, %c1, %c1) args(%x : memref<64xf32>)
    gpu.launch_func @scale_2::@scale_f16 blocks in (%c1, %c1, %c1) threads in (%c64, %c1, %c1) args(%h : memref<64xf16>)
    gpu.launch_func @other::@scale_by_3 blocks in (%c1, %c1, %c1) threads in (%c64, %c1, %c1) args(%x : memref<64xf32>)
    return
  }
}

// -----

// Kernels that name other symbols of their module are never merged (the
// same text may name different definitions), and a symbol renamed on the
// move is renamed where its module's kernels name it.
// CHECK-LABEL: gpu.module @a
// CHECK: memref.global "private" constant @c : memref<4xf32> = dense<1.000000e+00>
// CHECK: gpu.func @k(
// CHECK: memref.get_global @c :
// CHECK: memref.global "private" constant @c_0 : memref<4xf32> = dense<2.000000e+00>
// CHECK: gpu.func @k_1(
// CHECK: memref.get_global @c_0 :
// CHECK-LABEL: func.func @step
// CHECK: gpu.launch_func @a::@k
// CHECK: gpu.launch_func @a::@k_1
module attributes {gpu.container_module} {
  gpu.module @a {
    memref.global "private" constant @c : memref<4xf32> = dense<1.0>
    gpu.func @k(%x: memref<4xf32>) kernel {
      %i = gpu.thread_id x
      %g = memref.get_global @c : memref<4xf32>
      %v = memref.load %g[%i] : memref<4xf32>
      memref.store %v, %x[%i] : memref<4xf32>
      gpu.return
    }
  }
  gpu.module @b {
    memref.global "private" constant @c : memref<4xf32> = dense<2.0>
    gpu.func @k(%x: memref<4xf32>) kernel {
      %i = gpu.thread_id x
      %g = memref.get_global @c : memref<4xf32>
      %v = memref.load %g[%i] : memref<4xf32>
      memref.store %v, %x[%i] : memref<4xf32>
      gpu.return
    }
  }
  func.func @step(%x: memref<4xf32>) {
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    gpu.launch_func @a::@k blocks in (%c1, %c1, %c1) threads in (%c4, %c1, %c1) args(%x : memref<4xf32>)
    gpu.launch_func @b::@k blocks in (%c1, %c1, %c1) threads in (%c4, %c1, %c1) args(%x : memref<4xf32>)
    return
  }
}

// -----

// Names PTX cannot spell (a pipeline stage's kernels: `step.stage1_kernel`)
// take `_` for the characters it refuses, in the first module and in the
// others, with a suffix where the name is taken; launches follow.
// CHECK-LABEL: gpu.module @stages
// CHECK: gpu.func @step_stage0_kernel(
// CHECK: gpu.func @step_stage1_kernel(
// CHECK: gpu.func @step_stage1_kernel_1(
// CHECK-LABEL: func.func @step
// CHECK: gpu.launch_func @stages::@step_stage0_kernel
// CHECK: gpu.launch_func @stages::@step_stage1_kernel_1
// CHECK: gpu.launch_func @stages::@step_stage1_kernel
module attributes {gpu.container_module} {
  gpu.module @stages {
    gpu.func @"step.stage0_kernel"(%x: memref<64xf32>) kernel {
      %i = gpu.thread_id x
      %c = arith.constant 2.0 : f32
      %v = memref.load %x[%i] : memref<64xf32>
      %w = arith.mulf %v, %c : f32
      memref.store %w, %x[%i] : memref<64xf32>
      gpu.return
    }
    gpu.func @step_stage1_kernel(%x: memref<64xf32>) kernel {
      %i = gpu.thread_id x
      %c = arith.constant 5.0 : f32
      %v = memref.load %x[%i] : memref<64xf32>
      %w = arith.mulf %v, %c : f32
      memref.store %w, %x[%i] : memref<64xf32>
      gpu.return
    }
  }
  gpu.module @other {
    gpu.func @"step.stage1_kernel"(%x: memref<64xf32>) kernel {
      %i = gpu.thread_id x
      %c = arith.constant 3.0 : f32
      %v = memref.load %x[%i] : memref<64xf32>
      %w = arith.mulf %v, %c : f32
      memref.store %w, %x[%i] : memref<64xf32>
      gpu.return
    }
  }
  func.func @step(%x: memref<64xf32>) {
    %c1 = arith.constant 1 : index
    %c64 = arith.constant 64 : index
    gpu.launch_func @stages::@"step.stage0_kernel" blocks in (%c1, %c1, %c1) threads in (%c64, %c1, %c1) args(%x : memref<64xf32>)
    gpu.launch_func @other::@"step.stage1_kernel" blocks in (%c1, %c1, %c1) threads in (%c64, %c1, %c1) args(%x : memref<64xf32>)
    gpu.launch_func @stages::@step_stage1_kernel blocks in (%c1, %c1, %c1) threads in (%c64, %c1, %c1) args(%x : memref<64xf32>)
    return
  }
}
