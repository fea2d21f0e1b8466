/*===- CPUKernels.h - the kernel library's C ABI for generated code -*- C -*-===*\
|*                                                                            *|
|* Part of Ober-Train's runtime (no MLIR). Generated CPU code hands matrix    *|
|* products and convolutions to a kernel library (oneDNN) through these      *|
|* functions. Each takes a descriptor (a constant array of int64 whose       *|
|* fields the enums below name) and its operands as unranked memrefs        *|
|* (MLIR's C interface: a pointer to {rank, descriptor}, the descriptor      *|
|* holding the allocated and aligned pointers, the offset, then sizes and    *|
|* strides). Operands are dense and row-major; the library reads the         *|
|* aligned pointer and the offset. A kernel is created once per distinct     *|
|* descriptor and reused.                                                    *|
|*                                                                            *|
|* The compiler (convert-ober-to-linalg) includes this header for the names  *|
|* and field positions, so the two sides cannot disagree.                    *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef OBER_RUNTIME_CPUKERNELS_H
#define OBER_RUNTIME_CPUKERNELS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// The head of a memref descriptor of any rank (sizes and strides follow).
typedef struct ober_rt_memref {
  void *allocated;
  void *aligned;
  int64_t offset;
} ober_rt_memref;

/// An unranked memref: how generated code passes a buffer to the library.
typedef struct ober_rt_buffer {
  int64_t rank;
  ober_rt_memref *descriptor;
} ober_rt_buffer;

/* Names of the kernels as generated code declares them (without MLIR's
   `_mlir_ciface_` prefix, which the C interface adds). */
#define OBER_RT_CPU_MATMUL "ober_rt_cpu_matmul"
/* A matrix product on bf16 or f16 buffers is declared with the type after
   the name (ober_rt_cpu_matmul_bf16): generated code declares a function
   once per type of its memrefs. The CUDA target renames them to its own
   (CUDAKernels.h); the CPU library's compute as CUDA's do (in f32, the
   result rounded once) for the CUDA target's program mapped to the CPU. */
#define OBER_RT_MATMUL_SUFFIX_BF16 "_bf16"
#define OBER_RT_MATMUL_SUFFIX_F16 "_f16"
#define OBER_RT_CPU_CONV "ober_rt_cpu_conv"
#define OBER_RT_CPU_CONV_BACKWARD_DATA "ober_rt_cpu_conv_backward_data"
#define OBER_RT_CPU_CONV_BACKWARD_WEIGHTS "ober_rt_cpu_conv_backward_weights"

/// Matrix products: `c[b] = op(a[b]) @ op(b[b])` for each of `batch`
/// products, where op transposes when the flag is set. `a` holds
/// `a_batch` (1 or `batch`) matrices stored `[m, k]` (`[k, m]` when
/// transposed), `b` holds `b_batch` matrices stored `[k, n]` (`[n, k]`),
/// `c` holds `batch` matrices `[m, n]`; a batch of 1 is shared. `dtype`
/// (an ober::rt::DType) is the element type of all three, f32, bf16 or
/// f16, each with its own entry point; products accumulate in f32.
enum ober_rt_matmul_field {
  OBER_MATMUL_BATCH,
  OBER_MATMUL_A_BATCH,
  OBER_MATMUL_B_BATCH,
  OBER_MATMUL_M,
  OBER_MATMUL_N,
  OBER_MATMUL_K,
  OBER_MATMUL_TRANSPOSE_A,
  OBER_MATMUL_TRANSPOSE_B,
  OBER_MATMUL_DTYPE,
  OBER_MATMUL_FIELDS
};

/// The geometry of a forward convolution, f32, channels first: input
/// `[n, c, in...]`, weight `[o, c / groups, kernel...]`, output `[n, o,
/// out...]`; each array has `spatial` (1, 2 or 3) entries, in order after
/// the fixed fields. The three convolution kernels share it:
///   conv:                   (x, w, bias, y), bias read when has_bias;
///   conv_backward_data:     (dy, w, dx), dx shaped like the input;
///   conv_backward_weights:  (x, dy, dw).
enum ober_rt_conv_field {
  OBER_CONV_SPATIAL,
  OBER_CONV_N,
  OBER_CONV_C,
  OBER_CONV_O,
  OBER_CONV_GROUPS,
  OBER_CONV_HAS_BIAS,
  OBER_CONV_ARRAYS /* then in, kernel, out, stride, dilation, pad_begin,
                      pad_end: `spatial` entries each */
};
enum ober_rt_conv_array {
  OBER_CONV_IN,
  OBER_CONV_KERNEL,
  OBER_CONV_OUT,
  OBER_CONV_STRIDE,
  OBER_CONV_DILATION,
  OBER_CONV_PAD_BEGIN,
  OBER_CONV_PAD_END,
  OBER_CONV_NUM_ARRAYS
};

void _mlir_ciface_ober_rt_cpu_matmul(const ober_rt_buffer *desc,
                                     const ober_rt_buffer *a,
                                     const ober_rt_buffer *b,
                                     ober_rt_buffer *c);
void _mlir_ciface_ober_rt_cpu_matmul_bf16(const ober_rt_buffer *desc,
                                          const ober_rt_buffer *a,
                                          const ober_rt_buffer *b,
                                          ober_rt_buffer *c);
void _mlir_ciface_ober_rt_cpu_matmul_f16(const ober_rt_buffer *desc,
                                         const ober_rt_buffer *a,
                                         const ober_rt_buffer *b,
                                         ober_rt_buffer *c);
void _mlir_ciface_ober_rt_cpu_conv(const ober_rt_buffer *desc,
                                   const ober_rt_buffer *x,
                                   const ober_rt_buffer *w,
                                   const ober_rt_buffer *bias,
                                   ober_rt_buffer *y);
void _mlir_ciface_ober_rt_cpu_conv_backward_data(const ober_rt_buffer *desc,
                                                 const ober_rt_buffer *dy,
                                                 const ober_rt_buffer *w,
                                                 ober_rt_buffer *dx);
void _mlir_ciface_ober_rt_cpu_conv_backward_weights(const ober_rt_buffer *desc,
                                                    const ober_rt_buffer *x,
                                                    const ober_rt_buffer *dy,
                                                    ober_rt_buffer *dw);

/// Sets the threads kernels and generated parallel loops use (OpenMP).
void ober_rt_cpu_set_threads(int threads);

/// Creates the calling thread's kernel `name` for descriptor `desc`
/// (`size` fields) ahead of its first call, so that the first step does
/// not pay for it. Returns 0, or -1 when no kernel has that name, its
/// descriptor is shorter than the kernel reads, or a matrix product's
/// descriptor names another element type than its name; a descriptor the library
/// cannot run ends the process with the kernel's message, as a call would.
int ober_rt_cpu_prepare_kernel(const char *name, const int64_t *desc,
                               int64_t size);

/// The kernel symbols by name (and the compiler runtime's that generated
/// code may need, DType.h), for a JIT that resolves generated code's
/// calls in this process: fills `names` and `addresses` (up to `capacity`)
/// and returns how many there are.
int ober_rt_cpu_kernel_symbols(const char **names, void **addresses,
                               int capacity);

#ifdef __cplusplus
}

namespace ober::rt {
/// A dense row-major memref descriptor of rank R over `data` (no offset),
/// for C++ code that calls the library as generated code does.
template <int R> struct RankedMemref {
  ober_rt_memref head;
  int64_t sizes[R];
  int64_t strides[R];

  template <typename T>
  static RankedMemref over(T *data, const int64_t (&shape)[R]) {
    RankedMemref m{{data, data, 0}, {}, {}};
    int64_t stride = 1;
    for (int i = R - 1; i >= 0; --i) {
      m.sizes[i] = shape[i];
      m.strides[i] = stride;
      stride *= shape[i];
    }
    return m;
  }
  /// The unranked form the library's functions take.
  ober_rt_buffer unranked() { return {R, &head}; }
};
} // namespace ober::rt
#endif

#endif /* OBER_RUNTIME_CPUKERNELS_H */
