// The CUDA pipeline lowers a function of ober ops on tensors to host code
// in the LLVM dialect and one fatbin per kernel module: the matrix product
// calls the CUDA kernel library (cuBLASLt) on device buffers, buffers come
// from the runtime's device allocator, the bias and GELU run as a kernel.
// REQUIRES: cuda
// RUN: ober-opt %s --ober-cuda-pipeline -o %t.mlir
// RUN: FileCheck %s < %t.mlir
// RUN: mlir-translate --mlir-to-llvmir %t.mlir | FileCheck %s --check-prefix=IR
// CHECK-NOT: linalg.
// CHECK-NOT: memref.
// CHECK-NOT: scf.
// CHECK-NOT: ciface_ober_rt_cpu
// The launches queue on the stream the function takes at its entry; the
// host waits for it once, before returning (ober-cuda-queue-launches).
// CHECK: llvm.func @dense(
// CHECK: %[[STREAM:.*]] = llvm.call @mgpuStreamCreate()
// CHECK-NOT: mgpuStreamSynchronize
// CHECK: llvm.call @ober_rt_cuda_matmul(
// CHECK-NOT: mgpuStreamSynchronize
// CHECK: gpu.launch_func <%[[STREAM]] : !llvm.ptr> @dense_kernel::@dense_kernel blocks in
// CHECK: llvm.call @mgpuStreamSynchronize(%[[STREAM]])
// CHECK-NEXT: llvm.call @mgpuStreamDestroy(%[[STREAM]])
// CHECK-NEXT: llvm.return
// The one object is a fatbin (its magic number) for every chip.
// CHECK: gpu.binary @dense_kernel [#gpu.object<#nvvm.target<O = 3, chip = "sm_80">, "P\EDU\BA
// CHECK-NOT: #gpu.object
// IR: @dense_kernel_binary = internal constant [{{[0-9]+}} x i8] c"P\EDU\BA
// IR-DAG: call ptr @mgpuModuleLoad(ptr @dense_kernel_binary
// IR-DAG: call void @mgpuLaunchKernel(
// IR-DAG: declare ptr @_mlir_memref_to_llvm_alloc(i64)

// The host lowers to blocks with no guard left around a launch of known,
// non-empty work (each would split the function: quadratic in long steps).
// RUN: ober-opt %s --ober-cuda-pipeline --mlir-print-ir-before=convert-scf-to-cf -o /dev/null 2>&1 | FileCheck %s --check-prefix=GUARDS
// GUARDS: func.func @dense(
// GUARDS-NOT: scf.if
// GUARDS: gpu.launch_func
// GUARDS-NOT: scf.if
// GUARDS: gpu.module

// One chip, no PTX: the fatbin has exactly that machine code.
// RUN: ober-opt %s --ober-cuda-pipeline="chips=sm_90" --mlir-print-ir-after=ober-cuda-fatbin -o /dev/null 2>&1 | FileCheck %s --check-prefix=ONE
// ONE: #gpu.object<#nvvm.target<O = 3, chip = "sm_90">, "P\EDU\BA
func.func @dense(%x: tensor<4x3xf32>, %w: tensor<3x5xf32>, %b: tensor<5xf32>) -> tensor<4x5xf32> {
  %0 = ober.matmul %x, %w : (tensor<4x3xf32>, tensor<3x5xf32>) -> tensor<4x5xf32>
  %1 = ober.add %0, %b : (tensor<4x5xf32>, tensor<5xf32>) -> tensor<4x5xf32>
  %2 = ober.gelu %1 {approximate = #ober.gelu_approximation<none>} : tensor<4x5xf32>
  return %2 : tensor<4x5xf32>
}
