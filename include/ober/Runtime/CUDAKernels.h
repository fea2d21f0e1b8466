/*===- CUDAKernels.h - the CUDA kernel library's C ABI ------------*- C -*-===*\
|*                                                                            *|
|* Part of Ober-Train's runtime (no MLIR). Generated CUDA host code calls     *|
|* these with unranked memrefs as CPUKernels.h describes, whose aligned       *|
|* pointers are device addresses: the buffers of a CUDA program live on the   *|
|* GPU. Work is queued on the calling thread's stream (the one the program's  *|
|* kernels run on), so it is ordered with them.                               *|
|*                                                                            *|
|* The compiler (the CUDA target's passes) includes this header for the      *|
|* names, so the two sides cannot disagree.                                   *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef OBER_RUNTIME_CUDAKERNELS_H
#define OBER_RUNTIME_CUDAKERNELS_H

#include "ober/Runtime/CPUKernels.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Names as generated code declares them (MLIR's C interface adds the
   `_mlir_ciface_` prefix). */
#define OBER_RT_CUDA_MATMUL "ober_rt_cuda_matmul"
/* Followed by `_<bits>bit`: the element width of the buffers (1, 8, 16,
   32, 64; i1 elements take a byte each). */
#define OBER_RT_CUDA_UPLOAD "ober_rt_cuda_upload"

/// Matrix products as `ober_rt_cpu_matmul` defines them (the same
/// descriptor, ober_rt_matmul_field), on device buffers, by cuBLASLt: f32
/// buffers, and with the suffixes of CPUKernels.h bf16 and f16 ones
/// (tensor cores, accumulated in f32, the result rounded once).
#define OBER_RT_CUDA_MATMUL_DECLARE(SUFFIX)                                   \
  void _mlir_ciface_ober_rt_cuda_matmul##SUFFIX(                               \
      const ober_rt_buffer *desc, const ober_rt_buffer *a,                     \
      const ober_rt_buffer *b, ober_rt_buffer *c);
OBER_RT_CUDA_MATMUL_DECLARE()
OBER_RT_CUDA_MATMUL_DECLARE(_bf16)
OBER_RT_CUDA_MATMUL_DECLARE(_f16)
#undef OBER_RT_CUDA_MATMUL_DECLARE

/* Attention on tensor cores (FlashAttention-2's tiles: no score matrix
   in memory), for bf16 and f16 buffers (the suffix) with head sizes up to
   OBER_ATTENTION_MAX_HEAD and no mask. */
#define OBER_RT_CUDA_ATTENTION "ober_rt_cuda_attention"
#define OBER_RT_CUDA_ATTENTION_GRAD "ober_rt_cuda_attention_grad"
#define OBER_ATTENTION_MAX_HEAD 128
/* Batch entries times heads at most: a grid's y extent (CUDA's limit). */
#define OBER_ATTENTION_MAX_BATCH 65535
/* Queries (keys) the kernels take a tile at a time: a causal attention
   computes the tiles that hold a key some query sees. */
#define OBER_ATTENTION_TILE 64

/// The descriptor of both: `batch` independent attentions (batch entries
/// times heads) of `lq` queries and `lk` keys, Q [batch, lq, d], K
/// [batch, lk, d], V [batch, lk, dv], O and dO [batch, lq, dv]; `causal`
/// keeps key j for query i when j <= i; `scale` multiplies the scores (an
/// f64's bits); `dtype` is the buffers' element type (ober::rt::DType).
enum ober_rt_attention_field {
  OBER_ATTENTION_BATCH,
  OBER_ATTENTION_LQ,
  OBER_ATTENTION_LK,
  OBER_ATTENTION_D,
  OBER_ATTENTION_DV,
  OBER_ATTENTION_CAUSAL,
  OBER_ATTENTION_SCALE_BITS,
  OBER_ATTENTION_DTYPE,
  OBER_ATTENTION_FIELDS
};

/// o = ober.attention(q, k, v); the gradients (dq, dk, dv) of
/// ober.attention_grad(q, k, v, o, do).
#define OBER_RT_CUDA_ATTENTION_DECLARE(SUFFIX)                                \
  void _mlir_ciface_ober_rt_cuda_attention##SUFFIX(                            \
      const ober_rt_buffer *desc, const ober_rt_buffer *q,                     \
      const ober_rt_buffer *k, const ober_rt_buffer *v, ober_rt_buffer *o);    \
  void _mlir_ciface_ober_rt_cuda_attention_grad##SUFFIX(                       \
      const ober_rt_buffer *desc, const ober_rt_buffer *q,                     \
      const ober_rt_buffer *k, const ober_rt_buffer *v,                        \
      const ober_rt_buffer *o, const ober_rt_buffer *dO, ober_rt_buffer *dq,   \
      ober_rt_buffer *dk, ober_rt_buffer *dv);
OBER_RT_CUDA_ATTENTION_DECLARE(_bf16)
OBER_RT_CUDA_ATTENTION_DECLARE(_f16)
#undef OBER_RT_CUDA_ATTENTION_DECLARE

/// Copies a host constant `src` into the device buffer `dst` (same shape).
#define OBER_RT_CUDA_UPLOAD_DECLARE(BITS)                                     \
  void _mlir_ciface_ober_rt_cuda_upload_##BITS##bit(ober_rt_buffer *dst,      \
                                                    const ober_rt_buffer *src);
OBER_RT_CUDA_UPLOAD_DECLARE(1)
OBER_RT_CUDA_UPLOAD_DECLARE(8)
OBER_RT_CUDA_UPLOAD_DECLARE(16)
OBER_RT_CUDA_UPLOAD_DECLARE(32)
OBER_RT_CUDA_UPLOAD_DECLARE(64)
#undef OBER_RT_CUDA_UPLOAD_DECLARE

/// Device memory for generated code: `memref.alloc` and `dealloc` lower to
/// these (finalize-memref-to-llvm with use-generic-functions), through the
/// caching allocator, ordered on the calling thread's stream.
void *_mlir_memref_to_llvm_alloc(uint64_t bytes);
void *_mlir_memref_to_llvm_aligned_alloc(uint64_t alignment, uint64_t bytes);
void _mlir_memref_to_llvm_free(void *ptr);

#ifdef __cplusplus
}
#endif

#endif /* OBER_RUNTIME_CUDAKERNELS_H */
