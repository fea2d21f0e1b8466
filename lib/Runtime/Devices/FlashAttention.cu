//===- FlashAttention.cu - the flash attention kernels for nvcc -----------===//
//
// Part of Ober-Train's runtime. CUDA's environment for
// FlashAttentionKernels.h and its entry points, one per element type
// (bf16, f16) and pass. Built by nvcc into a fatbin (sm_80, sm_90, sm_100
// and PTX for later GPUs) that FlashAttention.cpp loads through the
// driver; see that file for the launches.
//
//===----------------------------------------------------------------------===//

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <mma.h>

#include <math.h>

#define OBER_FA_FN __device__ __forceinline__
#define OBER_FA_HD __host__ __device__ inline
#define OBER_FA_UNROLL _Pragma("unroll")
namespace fawmma = nvcuda::wmma;

template <typename E> struct FaElement;
template <> struct FaElement<__nv_bfloat16> {
  static __device__ float toFloat(__nv_bfloat16 x) { return __bfloat162float(x); }
  static __device__ __nv_bfloat16 fromFloat(float x) {
    return __float2bfloat16_rn(x);
  }
};
template <> struct FaElement<__half> {
  static __device__ float toFloat(__half x) { return __half2float(x); }
  static __device__ __half fromFloat(float x) { return __float2half_rn(x); }
};

__device__ __forceinline__ void oberFaSync() { __syncthreads(); }
__device__ __forceinline__ void oberFaAtomicAdd(float *p, float x) {
  atomicAdd(p, x);
}

#include "FlashAttentionKernels.h"

using ober::flash::Shape;
namespace d = ober::flash::detail;

extern __shared__ __align__(128) char oberFaShared[];

#define OBER_FA_KERNELS(SUFFIX, E)                                             \
  extern "C" __global__ void __launch_bounds__(ober::flash::kThreads)          \
      ober_flash_forward_##SUFFIX(const E *q, const E *k, const E *v, E *o,    \
                                  Shape s) {                                   \
    d::forwardBlock<E, true>(q, k, v, o, nullptr, s, oberFaShared);            \
  }                                                                            \
  extern "C" __global__ void __launch_bounds__(ober::flash::kThreads)          \
      ober_flash_lse_##SUFFIX(const E *q, const E *k, float *lse, Shape s) {   \
    d::forwardBlock<E, false>(q, k, nullptr, nullptr, lse, s, oberFaShared);   \
  }                                                                            \
  extern "C" __global__ void __launch_bounds__(ober::flash::kThreads)          \
      ober_flash_delta_##SUFFIX(const E *o, const E *dO, float *delta,         \
                                Shape s) {                                     \
    d::deltaBlock<E>(o, dO, delta, s);                                         \
  }                                                                            \
  extern "C" __global__ void __launch_bounds__(ober::flash::kThreads)          \
      ober_flash_backward_##SUFFIX(const E *q, const E *k, const E *v,         \
                                   const E *dO, const float *lse,              \
                                   const float *delta, float *dqAcc, E *dk,    \
                                   E *dv, Shape s) {                           \
    d::backwardBlock<E>(q, k, v, dO, lse, delta, dqAcc, dk, dv, s,             \
                        oberFaShared);                                         \
  }                                                                            \
  extern "C" __global__ void __launch_bounds__(ober::flash::kThreads)          \
      ober_flash_finish_dq_##SUFFIX(const float *dqAcc, E *dq, int64_t n) {    \
    d::finishDqElement<E>(dqAcc, dq, n);                                       \
  }

OBER_FA_KERNELS(bf16, __nv_bfloat16)
OBER_FA_KERNELS(f16, __half)
