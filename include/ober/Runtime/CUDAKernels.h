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
