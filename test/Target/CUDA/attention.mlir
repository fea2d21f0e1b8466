// Attention on the GPU: the fused loops (the CUDA pipeline's default) run
// as kernels, one thread per query row (forward, dQ) or key row (dK, dV);
// no buffer of the score matrix's size (2 x 2 x 64 x 64) is allocated and
// no matrix product goes to cuBLASLt. `attention=decomposed` computes the
// scores with cuBLASLt instead.
// REQUIRES: cuda
// RUN: ober-opt %s --ober-cuda-pipeline="chips=sm_90" -o %t.mlir
// RUN: FileCheck %s < %t.mlir
// RUN: ober-opt %s --ober-cuda-pipeline="chips=sm_90 attention=decomposed" | FileCheck %s --check-prefix=DECOMPOSED
// The device code as launches on buffers: none of the scores' shape.
// RUN: ober-opt %s --ober-cuda-pipeline="chips=sm_90" --mlir-print-ir-after=ober-cuda-map-to-gpu -o /dev/null 2>&1 | FileCheck %s --check-prefix=LAUNCHES --implicit-check-not=64x64
// RUN: ober-opt %s --ober-cuda-pipeline="chips=sm_90 attention=decomposed" --mlir-print-ir-after=ober-cuda-map-to-gpu -o /dev/null 2>&1 | FileCheck %s --check-prefix=SCORES
// LAUNCHES: gpu.launch
// SCORES: memref<2x2x64x64xf32>
// CHECK-NOT: ober_rt_cuda_matmul
// CHECK: llvm.func @step(
// CHECK-COUNT-3: gpu.launch_func @step_kernel::@step_kernel
// CHECK: gpu.binary @step_kernel [#gpu.object<#nvvm.target<O = 3, chip = "sm_90">, "P\EDU\BA
// DECOMPOSED: llvm.call @ober_rt_cuda_matmul(
func.func @step(%q: tensor<2x2x64x32xbf16>, %k: tensor<2x2x64x32xbf16>, %v: tensor<2x2x64x32xbf16>, %g: tensor<2x2x64x32xbf16>) -> (tensor<2x2x64x32xbf16>, tensor<2x2x64x32xbf16>, tensor<2x2x64x32xbf16>, tensor<2x2x64x32xbf16>) {
  %o = ober.attention %q, %k, %v {is_causal} : (tensor<2x2x64x32xbf16>, tensor<2x2x64x32xbf16>, tensor<2x2x64x32xbf16>) -> tensor<2x2x64x32xbf16>
  %r:3 = ober.attention_grad %q, %k, %v, %o, %g {is_causal} : (tensor<2x2x64x32xbf16>, tensor<2x2x64x32xbf16>, tensor<2x2x64x32xbf16>, tensor<2x2x64x32xbf16>, tensor<2x2x64x32xbf16>) -> (tensor<2x2x64x32xbf16>, tensor<2x2x64x32xbf16>, tensor<2x2x64x32xbf16>)
  return %o, %r#0, %r#1, %r#2 : tensor<2x2x64x32xbf16>, tensor<2x2x64x32xbf16>, tensor<2x2x64x32xbf16>, tensor<2x2x64x32xbf16>
}
