//===- ProgramKernels.cpp - what generated CUDA host code calls -----------===//
//
// Part of Ober-Train's runtime (no MLIR). The functions of
// ober/Runtime/CUDAKernels.h: device buffers for `memref.alloc`, matrix
// products through cuBLASLt, constants copied from the host image.
//
// Everything queues on the thread's program stream (Modules.h), in the
// order the program calls it; nothing here waits for the GPU.
//
//===----------------------------------------------------------------------===//

#include "ober/Runtime/CUDAKernels.h"

#include "ober/Runtime/Devices/CUDA.h"
#include "ober/Runtime/Devices/CachingAllocator.h"
#include "ober/Runtime/Devices/CuBLASLt.h"
#include "ober/Runtime/Devices/Modules.h"

#include "Buffers.h"

#include <cstdio>
#include <cstdlib>
#include <exception>

using namespace ober::rt;
using namespace ober::rt::cuda;
using namespace ober::rt::cuda::detail;

namespace {

void upload(ober_rt_buffer *dst, const ober_rt_buffer *src, size_t bytes) {
  guarded("ober_rt_cuda_upload", [&] {
    currentDevice();
    // The source is a constant of the program's image: it stays.
    copyToDeviceAsync(dataOf(dst, bytes), dataOf(src, bytes),
                      static_cast<size_t>(elementsOf(src)) * bytes,
                      programStream());
  });
}

/// The matrix products of CUDAKernels.h on buffers of `type` (each entry
/// point's, which its descriptor must name: f32, or bf16/f16 accumulated
/// in f32 with low-precision-products).
void matmul(const ober_rt_buffer *desc, const ober_rt_buffer *a,
            const ober_rt_buffer *b, ober_rt_buffer *c, DType type) {
  guarded("ober_rt_cuda_matmul", [&] {
    const auto *f = reinterpret_cast<const int64_t *>(dataOf(desc, 8));
    if (desc->rank != 1 || elementsOf(desc) < OBER_MATMUL_FIELDS)
      throw CudaError("a matrix product's descriptor has " +
                      std::to_string(elementsOf(desc)) + " fields, expected " +
                      std::to_string(OBER_MATMUL_FIELDS));
    if (f[OBER_MATMUL_DTYPE] != static_cast<int64_t>(type))
      throw CudaError(std::string("a matrix product on ") + dtypeName(type) +
                      " buffers has a descriptor naming element type " +
                      std::to_string(f[OBER_MATMUL_DTYPE]));
    GemmDesc g;
    g.a = g.b = g.c = type;
    size_t bytes = dtypeSize(g.a);
    g.m = f[OBER_MATMUL_M];
    g.n = f[OBER_MATMUL_N];
    g.k = f[OBER_MATMUL_K];
    g.transA = f[OBER_MATMUL_TRANSPOSE_A] != 0;
    g.transB = f[OBER_MATMUL_TRANSPOSE_B] != 0;
    int64_t batch = f[OBER_MATMUL_BATCH];
    bool sharedA = f[OBER_MATMUL_A_BATCH] == 1 && batch > 1,
         sharedB = f[OBER_MATMUL_B_BATCH] == 1 && batch > 1;
    const char *pa = dataOf(a, bytes), *pb = dataOf(b, bytes);
    char *pc = dataOf(c, bytes);
    CUstream stream = programStream();
    if (!sharedA && !sharedB) {
      g.batch = batch;
      gemm(g, pa, pb, pc, stream);
    } else {
      // A matrix shared by every product: one GEMM per product (a packed
      // batch strides through both operands).
      size_t strideA = sharedA ? 0 : g.m * g.k * bytes,
             strideB = sharedB ? 0 : g.k * g.n * bytes,
             strideC = g.m * g.n * bytes;
      for (int64_t i = 0; i < batch; ++i)
        gemm(g, pa + i * strideA, pb + i * strideB, pc + i * strideC, stream);
    }
  });
}

} // namespace

CUstream ober::rt::cuda::programStream() {
  // Never destroyed: thread and process exit may run after the driver's
  // own teardown, and the driver frees its streams with the context.
  thread_local Stream *stream = nullptr;
  thread_local int ordinal = -1;
  int device = currentDevice();
  if (!stream || ordinal != device) {
    stream = new Stream(/*nonBlocking=*/true);
    ordinal = device;
  }
  return stream->get();
}

extern "C" {

#define OBER_RT_CUDA_MATMUL_DEFINE(SUFFIX, TYPE)                              \
  void _mlir_ciface_ober_rt_cuda_matmul##SUFFIX(                               \
      const ober_rt_buffer *desc, const ober_rt_buffer *a,                     \
      const ober_rt_buffer *b, ober_rt_buffer *c) {                            \
    matmul(desc, a, b, c, DType::TYPE);                                        \
  }
OBER_RT_CUDA_MATMUL_DEFINE(, F32)
OBER_RT_CUDA_MATMUL_DEFINE(_bf16, BF16)
OBER_RT_CUDA_MATMUL_DEFINE(_f16, F16)
#undef OBER_RT_CUDA_MATMUL_DEFINE

#define OBER_RT_CUDA_UPLOAD_DEFINE(BITS, BYTES)                               \
  void _mlir_ciface_ober_rt_cuda_upload_##BITS##bit(                          \
      ober_rt_buffer *dst, const ober_rt_buffer *src) {                       \
    upload(dst, src, BYTES);                                                   \
  }
OBER_RT_CUDA_UPLOAD_DEFINE(1, 1)
OBER_RT_CUDA_UPLOAD_DEFINE(8, 1)
OBER_RT_CUDA_UPLOAD_DEFINE(16, 2)
OBER_RT_CUDA_UPLOAD_DEFINE(32, 4)
OBER_RT_CUDA_UPLOAD_DEFINE(64, 8)
#undef OBER_RT_CUDA_UPLOAD_DEFINE

void *_mlir_memref_to_llvm_alloc(uint64_t bytes) {
  return guarded("memref.alloc", [&] {
    // Stream-ordered: a block freed by the program is reused only by
    // work queued after the free on the same stream.
    return deviceAllocator(currentDevice()).allocate(bytes, programStream());
  });
}

void *_mlir_memref_to_llvm_aligned_alloc(uint64_t alignment, uint64_t bytes) {
  // Blocks are aligned to 512 bytes, more than any memref asks for.
  (void)alignment;
  return _mlir_memref_to_llvm_alloc(bytes);
}

void _mlir_memref_to_llvm_free(void *ptr) {
  if (!ptr)
    return;
  guarded("memref.dealloc",
         [&] { deviceAllocator(currentDevice()).free(ptr); });
}

} // extern "C"
