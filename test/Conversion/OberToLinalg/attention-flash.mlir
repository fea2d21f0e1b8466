// RUN: ober-opt %s --convert-ober-to-linalg="attention=flash" --split-input-file | FileCheck %s

// With attention=flash a bf16 or f16 attention without a mask calls the
// CUDA library's tensor-core kernels on dense buffers. The descriptor:
// 4 batch entries and heads, 64 queries, 48 keys, heads of 32 and 16,
// causal, the scale 1/sqrt(32) as an f64's bits, element type bf16 (1).
// CHECK: memref.global "private" constant @__ober_rt_cuda_attention_bf16_desc{{.*}} : memref<8xi64> = dense<[4, 64, 48, 32, 16, 1, 4595537071963061196, 1]>
// CHECK: memref.global "private" constant @__ober_rt_cuda_attention_grad_bf16_desc{{.*}} = dense<[4, 64, 48, 32, 16, 1, 4595537071963061196, 1]>
// CHECK-LABEL: func.func @step
// CHECK: %[[O:.*]] = memref.alloc() {alignment = 64 : i64} : memref<2x2x64x16xbf16>
// CHECK: call @ober_rt_cuda_attention_bf16(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (memref<*xi64>, memref<*xbf16>, memref<*xbf16>, memref<*xbf16>, memref<*xbf16>) -> ()
// CHECK: call @ober_rt_cuda_attention_grad_bf16({{.*}}) : (memref<*xi64>, memref<*xbf16>, memref<*xbf16>, memref<*xbf16>, memref<*xbf16>, memref<*xbf16>, memref<*xbf16>, memref<*xbf16>, memref<*xbf16>) -> ()
// CHECK-NOT: ober.attention
func.func @step(%q: tensor<2x2x64x32xbf16>, %k: tensor<2x2x48x32xbf16>, %v: tensor<2x2x48x16xbf16>, %g: tensor<2x2x64x16xbf16>) -> (tensor<2x2x64x16xbf16>, tensor<2x2x64x32xbf16>, tensor<2x2x48x32xbf16>, tensor<2x2x48x16xbf16>) {
  %o = ober.attention %q, %k, %v {is_causal} : (tensor<2x2x64x32xbf16>, tensor<2x2x48x32xbf16>, tensor<2x2x48x16xbf16>) -> tensor<2x2x64x16xbf16>
  %r:3 = ober.attention_grad %q, %k, %v, %o, %g {is_causal} : (tensor<2x2x64x32xbf16>, tensor<2x2x48x32xbf16>, tensor<2x2x48x16xbf16>, tensor<2x2x64x16xbf16>, tensor<2x2x64x16xbf16>) -> (tensor<2x2x64x32xbf16>, tensor<2x2x48x32xbf16>, tensor<2x2x48x16xbf16>)
  return %o, %r#0, %r#1, %r#2 : tensor<2x2x64x16xbf16>, tensor<2x2x64x32xbf16>, tensor<2x2x48x32xbf16>, tensor<2x2x48x16xbf16>
}

// -----

// What the kernels do not take is blocked as by default, its products
// through the kernel library: f32, a mask, heads over 128.
// CHECK-LABEL: func.func @others
// CHECK-NOT: ober_rt_cuda_attention
// CHECK: call @ober_rt_cpu_matmul
func.func @others(%q: tensor<2x8x16xf32>, %k: tensor<2x8x16xf32>, %v: tensor<2x8x16xf32>,
                  %hq: tensor<2x8x16xbf16>, %hk: tensor<2x8x16xbf16>, %hv: tensor<2x8x16xbf16>, %m: tensor<8x8xi1>,
                  %wq: tensor<1x8x256xf16>, %wk: tensor<1x8x256xf16>, %wv: tensor<1x8x256xf16>)
    -> (tensor<2x8x16xf32>, tensor<2x8x16xbf16>, tensor<1x8x256xf16>) {
  %a = ober.attention %q, %k, %v : (tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  %b = ober.attention %hq, %hk, %hv, %m : (tensor<2x8x16xbf16>, tensor<2x8x16xbf16>, tensor<2x8x16xbf16>, tensor<8x8xi1>) -> tensor<2x8x16xbf16>
  %c = ober.attention %wq, %wk, %wv : (tensor<1x8x256xf16>, tensor<1x8x256xf16>, tensor<1x8x256xf16>) -> tensor<1x8x256xf16>
  return %a, %b, %c : tensor<2x8x16xf32>, tensor<2x8x16xbf16>, tensor<1x8x256xf16>
}
