//===- CuBLASLt.h - matrix products through cuBLASLt ------------*- C++ -*-===//
//
// Part of Ober-Train's runtime (no MLIR). Row-major GEMMs, batched with
// strides, on cuBLASLt opened with dlopen when first used
// (libcublasLt.so.13, else libcublasLt.so; also looked for in
// $CUDA_HOME/lib64 and /usr/local/cuda/lib64). cuBLASLt is column-major:
// a row-major C = A B is its C^T = B^T A^T, which is the same memory, so
// the operands are swapped rather than copied.
//
// The descriptors, layouts and the algorithm cuBLASLt's heuristic picks
// are made once per shape and kept; the workspace comes from the device's
// caching allocator on the GEMM's stream.
//
//===----------------------------------------------------------------------===//

#ifndef OBER_RUNTIME_DEVICES_CUBLASLT_H
#define OBER_RUNTIME_DEVICES_CUBLASLT_H

#include "ober/Runtime/DType.h"

#include <cuda.h>

#include <cstddef>
#include <cstdint>

namespace ober::rt::cuda {

/// Row-major C[M,N] = alpha * op(A)[M,K] op(B)[K,N] + beta * C, `batch`
/// times. Supported types (A, B, C; accumulation in f32):
///   bf16, bf16, bf16 or f32;  f16, f16, f16 or f32;
///   f32, f32, f32 (with `tf32`: inputs rounded to TF32 on tensor cores).
struct GemmDesc {
  DType a = DType::BF16, b = DType::BF16, c = DType::BF16;
  /// f32 only: CUBLAS_COMPUTE_32F_FAST_TF32 rather than CUBLAS_COMPUTE_32F.
  bool tf32 = false;
  int64_t m = 0, n = 0, k = 0;
  /// A is stored [K,M] and op(A) = A^T; likewise B is stored [N,K].
  bool transA = false, transB = false;
  int64_t batch = 1;
  /// Elements from one matrix of a batch to the next; 0: packed
  /// (M*K, K*N, M*N).
  int64_t strideA = 0, strideB = 0, strideC = 0;
  float alpha = 1, beta = 0;
};

/// Opens cuBLASLt and makes the current device's handle now rather than
/// at the first GEMM (with eager kernel loading, this loads its kernels).
/// Throws CudaError when cuBLASLt is missing.
void openGemms();

/// Queues the GEMM on `stream` in the current context (A, B, C device
/// pointers). Throws CudaError when cuBLASLt is missing, the types are
/// not a supported combination (naming them and the supported ones), a
/// size is not positive, or cuBLASLt has no algorithm for the shape.
void gemm(const GemmDesc &desc, const void *a, const void *b, void *c,
          CUstream stream);

/// The precisions measureGemm and the calibration tool compare.
enum class GemmPrecision { BF16, F16, TF32, F32 };
/// "bf16", "f16", "tf32", "f32" (the keys of a cluster file's gemm table).
const char *gemmPrecisionName(GemmPrecision precision);
/// A GemmDesc of `precision` with C of the input type.
GemmDesc gemmDescFor(GemmPrecision precision, int64_t m, int64_t n, int64_t k,
                     bool transA = false, bool transB = false);

/// The throughput (FLOP/s, 2 M N K per product) of `iterations` GEMMs of
/// the shape on the current device, after warm-up runs, timed with events
/// on a stream of its own, on pseudo-random data (zeros would run faster
/// than real data).
double measureGemm(GemmPrecision precision, int64_t m, int64_t n, int64_t k,
                   bool transposedA, int iterations);

/// cuBLASLt's version (e.g. 130100); opens the library.
size_t cublasLtVersion();

} // namespace ober::rt::cuda

#endif // OBER_RUNTIME_DEVICES_CUBLASLT_H
