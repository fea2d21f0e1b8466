// Attention on the GPU. By default (attention=blocked) a block of
// queries at a time: here blocks of 16 queries, causal, so the blocks read
// 16, 32, 48 and 64 keys and their scores go through cuBLASLt; no buffer
// of the whole score matrix's size (2 x 2 x 64 x 64) is allocated.
// `attention=fused` runs the fused loops as kernels, one thread per query
// row (forward, dQ) or key row (dK, dV), with no score buffer and no
// matrix product in cuBLASLt. `attention=decomposed` computes the whole
// score matrix with cuBLASLt. `attention=flash` calls the CUDA library's
// tensor-core kernels (FlashAttention.cu): one call each way, no score
// buffer, neither generated kernels nor cuBLASLt for attention.
// REQUIRES: cuda
// RUN: ober-opt %s --ober-cuda-pipeline="chips=sm_90 attention=flash" | FileCheck %s --check-prefix=FLASH --implicit-check-not=ober_rt_cuda_matmul --implicit-check-not=64x64
// FLASH: llvm.func private @ober_rt_cuda_attention_bf16(
// FLASH: llvm.func private @ober_rt_cuda_attention_grad_bf16(
// FLASH: llvm.call @ober_rt_cuda_attention_bf16(
// FLASH: llvm.call @ober_rt_cuda_attention_grad_bf16(
// RUN: ober-opt %s --ober-cuda-pipeline="chips=sm_90 attention=fused" -o %t.mlir
// RUN: FileCheck %s < %t.mlir
// RUN: ober-opt %s --ober-cuda-pipeline="chips=sm_90 attention=decomposed" | FileCheck %s --check-prefix=DECOMPOSED
// RUN: ober-opt %s --ober-cuda-pipeline="chips=sm_90 attention-block=16" | FileCheck %s --check-prefix=DECOMPOSED
// The device code as launches on buffers: none of the scores' shape.
// RUN: ober-opt %s --ober-cuda-pipeline="chips=sm_90 attention=fused" --mlir-print-ir-after=ober-cuda-map-to-gpu -o /dev/null 2>&1 | FileCheck %s --check-prefix=LAUNCHES --implicit-check-not=64x64
// RUN: ober-opt %s --ober-cuda-pipeline="chips=sm_90 attention=decomposed" --mlir-print-ir-after=ober-cuda-map-to-gpu -o /dev/null 2>&1 | FileCheck %s --check-prefix=SCORES
// RUN: ober-opt %s --ober-cuda-pipeline="chips=sm_90 attention-block=16" --mlir-print-ir-after=ober-cuda-map-to-gpu -o /dev/null 2>&1 | FileCheck %s --check-prefix=BLOCKS --implicit-check-not=64x64
// LAUNCHES: gpu.launch
// SCORES: memref<2x2x64x64xf32>
// BLOCKS-DAG: memref<2x2x16x16x
// BLOCKS-DAG: memref<2x2x16x32x
// BLOCKS-DAG: memref<2x2x16x48x
// BLOCKS-DAG: memref<2x2x16x64x
// CHECK-NOT: ober_rt_cuda_matmul
// CHECK: llvm.func @step(
// CHECK-COUNT-3: gpu.launch_func <%[[STREAM:[0-9]+]] : !llvm.ptr> @step_kernel::@step_kernel
// CHECK: gpu.binary @step_kernel [#gpu.object<#nvvm.target<O = 3, chip = "sm_90">, "P\EDU\BA
// DECOMPOSED: llvm.call @ober_rt_cuda_matmul_bf16(
func.func @step(%q: tensor<2x2x64x32xbf16>, %k: tensor<2x2x64x32xbf16>, %v: tensor<2x2x64x32xbf16>, %g: tensor<2x2x64x32xbf16>) -> (tensor<2x2x64x32xbf16>, tensor<2x2x64x32xbf16>, tensor<2x2x64x32xbf16>, tensor<2x2x64x32xbf16>) {
  %o = ober.attention %q, %k, %v {is_causal} : (tensor<2x2x64x32xbf16>, tensor<2x2x64x32xbf16>, tensor<2x2x64x32xbf16>) -> tensor<2x2x64x32xbf16>
  %r:3 = ober.attention_grad %q, %k, %v, %o, %g {is_causal} : (tensor<2x2x64x32xbf16>, tensor<2x2x64x32xbf16>, tensor<2x2x64x32xbf16>, tensor<2x2x64x32xbf16>, tensor<2x2x64x32xbf16>) -> (tensor<2x2x64x32xbf16>, tensor<2x2x64x32xbf16>, tensor<2x2x64x32xbf16>)
  return %o, %r#0, %r#1, %r#2 : tensor<2x2x64x32xbf16>, tensor<2x2x64x32xbf16>, tensor<2x2x64x32xbf16>, tensor<2x2x64x32xbf16>
}
