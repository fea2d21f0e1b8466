//===- FlashAttention.cpp - launches of the flash attention kernels -------===//
//
// Part of Ober-Train's runtime (no MLIR). The entry points of
// CUDAKernels.h for attention: the kernels of FlashAttention.cu, built by
// nvcc into a fatbin that is part of this object (`.incbin`) and loaded
// through the driver when first launched, queued on the program stream.
// The backward pass takes f32 scratch from the caching allocator: each
// row's log-sum-exp and D, and dQ while the key blocks add to it.
//
//===----------------------------------------------------------------------===//

#include "ober/Runtime/CUDAKernels.h"

#include "ober/Runtime/DType.h"
#include "ober/Runtime/Devices/CUDA.h"
#include "ober/Runtime/Devices/CachingAllocator.h"
#include "ober/Runtime/Devices/Modules.h"

#include "Buffers.h"
#include "FlashAttentionShape.h"

#include <algorithm>
#include <cstring>
#include <string>

using namespace ober::rt;
using namespace ober::rt::cuda;
using namespace ober::rt::cuda::detail;
using ober::flash::kGridRow;
using ober::flash::Shape;

// The fatbin, between these two symbols (the path comes from the build).
extern "C" const unsigned char oberFlashAttentionFatbin[];
extern "C" const unsigned char oberFlashAttentionFatbinEnd[];
__asm__(".section .rodata.ober_flash_attention,\"a\"\n"
        ".balign 64\n"
        ".globl oberFlashAttentionFatbin\n"
        ".hidden oberFlashAttentionFatbin\n"
        "oberFlashAttentionFatbin:\n"
        ".incbin \"" OBER_FLASH_ATTENTION_FATBIN "\"\n"
        ".globl oberFlashAttentionFatbinEnd\n"
        ".hidden oberFlashAttentionFatbinEnd\n"
        "oberFlashAttentionFatbinEnd:\n"
        ".byte 0\n"
        ".previous\n");

namespace {

/// Made before main (touching no driver), so that a rank's
/// KernelModule::loadAllHere loads it with the program's own kernels.
KernelModule flashModule(
    oberFlashAttentionFatbin,
    static_cast<size_t>(oberFlashAttentionFatbinEnd - oberFlashAttentionFatbin),
    ImageFormat::Fatbin);

/// The shape a descriptor gives, checked against the entry point's type.
Shape shapeOf(const ober_rt_buffer *desc, DType type) {
  if (desc->rank != 1 || elementsOf(desc) < OBER_ATTENTION_FIELDS)
    throw CudaError("an attention's descriptor has " +
                    std::to_string(elementsOf(desc)) + " fields, expected " +
                    std::to_string(OBER_ATTENTION_FIELDS));
  const auto *f = reinterpret_cast<const int64_t *>(dataOf(desc, 8));
  if (f[OBER_ATTENTION_DTYPE] != static_cast<int64_t>(type))
    throw CudaError(std::string("an attention on ") + dtypeName(type) +
                    " buffers has a descriptor naming element type " +
                    std::to_string(f[OBER_ATTENTION_DTYPE]));
  Shape s;
  s.batch = f[OBER_ATTENTION_BATCH];
  s.lq = f[OBER_ATTENTION_LQ];
  s.lk = f[OBER_ATTENTION_LK];
  int64_t d = f[OBER_ATTENTION_D], dv = f[OBER_ATTENTION_DV];
  if (s.batch < 1 || s.batch > OBER_ATTENTION_MAX_BATCH || s.lq < 1 ||
      s.lk < 1 || d < 1 ||
      dv < 1 || d > OBER_ATTENTION_MAX_HEAD || dv > OBER_ATTENTION_MAX_HEAD)
    throw CudaError("an attention of " + std::to_string(s.batch) +
                    " batch entries and heads, " + std::to_string(s.lq) +
                    " queries, " + std::to_string(s.lk) + " keys, heads of " +
                    std::to_string(d) + " and " + std::to_string(dv) +
                    ": the kernels take 1 to " +
                    std::to_string(OBER_ATTENTION_MAX_BATCH) +
                    " batch entries and heads and heads of 1 to " +
                    std::to_string(OBER_ATTENTION_MAX_HEAD));
  s.d = static_cast<int32_t>(d);
  s.dv = static_cast<int32_t>(dv);
  s.causal = f[OBER_ATTENTION_CAUSAL] != 0;
  double scale;
  std::memcpy(&scale, &f[OBER_ATTENTION_SCALE_BITS], sizeof(scale));
  s.scale = static_cast<float>(scale);
  return s;
}

unsigned tiles(int64_t n) {
  return static_cast<unsigned>((n + ober::flash::kTile - 1) / ober::flash::kTile);
}

/// Queues kernel `name` over the grid [x, y] of blocks of kThreads, after
/// checking that the device gives a block `shared` bytes.
void launch(const std::string &name, unsigned x, unsigned y, int64_t shared,
            void **params, const Shape &s) {
  const DeviceInfo &device = sharedDevice(currentDevice()).info();
  if (shared > device.maxSharedPerBlock)
    throw CudaError(name + " for heads of " + std::to_string(s.d) + " and " +
                    std::to_string(s.dv) + " needs " + std::to_string(shared) +
                    " bytes of shared memory a block; " + device.name +
                    " gives at most " +
                    std::to_string(device.maxSharedPerBlock) +
                    " (smaller heads, or --attention=blocked)");
  mgpuLaunchKernel(flashModule.getFunction(name), x, y, 1,
                   ober::flash::kThreads, 1, 1, static_cast<int32_t>(shared),
                   programStream(), params, nullptr, 0);
}

void forward(const ober_rt_buffer *desc, const ober_rt_buffer *q,
             const ober_rt_buffer *k, const ober_rt_buffer *v,
             ober_rt_buffer *o, DType type, const char *suffix) {
  guarded(OBER_RT_CUDA_ATTENTION, [&] {
    Shape s = shapeOf(desc, type);
    size_t bytes = dtypeSize(type);
    const void *pq = dataOf(q, bytes), *pk = dataOf(k, bytes),
               *pv = dataOf(v, bytes);
    void *po = dataOf(o, bytes);
    void *params[] = {&pq, &pk, &pv, &po, &s};
    launch(std::string("ober_flash_forward_") + suffix, tiles(s.lq),
           static_cast<unsigned>(s.batch),
           ober::flash::forwardLayout(s, static_cast<int64_t>(bytes), true)
               .bytes,
           params, s);
  });
}

void backward(const ober_rt_buffer *desc, const ober_rt_buffer *q,
              const ober_rt_buffer *k, const ober_rt_buffer *v,
              const ober_rt_buffer *o, const ober_rt_buffer *dO,
              ober_rt_buffer *dq, ober_rt_buffer *dk, ober_rt_buffer *dv,
              DType type, const char *suffix) {
  guarded(OBER_RT_CUDA_ATTENTION_GRAD, [&] {
    Shape s = shapeOf(desc, type);
    size_t bytes = dtypeSize(type);
    std::string name = suffix;
    const void *pq = dataOf(q, bytes), *pk = dataOf(k, bytes),
               *pv = dataOf(v, bytes), *po = dataOf(o, bytes),
               *pdo = dataOf(dO, bytes);
    void *pdq = dataOf(dq, bytes), *pdk = dataOf(dk, bytes),
         *pdv = dataOf(dv, bytes);
    CUstream stream = programStream();
    CachingAllocator &memory = deviceAllocator(currentDevice());
    int64_t rows = s.batch * s.lq, n = rows * s.d;
    auto *lse = static_cast<float *>(memory.allocate(rows * 4, stream));
    auto *delta = static_cast<float *>(memory.allocate(rows * 4, stream));
    auto *dqAcc = static_cast<float *>(memory.allocate(n * 4, stream));
    memset32Async(dqAcc, 0, static_cast<size_t>(n), stream);
    auto eBytes = static_cast<int64_t>(bytes);
    void *lseParams[] = {&pq, &pk, &lse, &s};
    launch("ober_flash_lse_" + name, tiles(s.lq),
           static_cast<unsigned>(s.batch),
           ober::flash::forwardLayout(s, eBytes, false).bytes, lseParams, s);
    void *deltaParams[] = {&po, &pdo, &delta, &s};
    launch("ober_flash_delta_" + name, tiles(s.lq),
           static_cast<unsigned>(s.batch), 0, deltaParams, s);
    void *backParams[] = {&pq,  &pk,  &pv,  &pdo, &lse,
                          &delta, &dqAcc, &pdk, &pdv, &s};
    launch("ober_flash_backward_" + name, tiles(s.lk),
           static_cast<unsigned>(s.batch),
           ober::flash::backwardLayout(s, eBytes).bytes, backParams, s);
    int64_t blocks = (n + ober::flash::kThreads - 1) / ober::flash::kThreads;
    void *finishParams[] = {&dqAcc, &pdq, &n};
    launch("ober_flash_finish_dq_" + name,
           static_cast<unsigned>(std::min<int64_t>(blocks, kGridRow)),
           static_cast<unsigned>((blocks + kGridRow - 1) / kGridRow), 0,
           finishParams, s);
    // Stream-ordered: reused only by work queued after these kernels.
    memory.free(lse);
    memory.free(delta);
    memory.free(dqAcc);
  });
}

} // namespace

extern "C" {

#define OBER_RT_CUDA_ATTENTION_DEFINE(SUFFIX, TYPE)                           \
  void _mlir_ciface_ober_rt_cuda_attention_##SUFFIX(                           \
      const ober_rt_buffer *desc, const ober_rt_buffer *q,                     \
      const ober_rt_buffer *k, const ober_rt_buffer *v, ober_rt_buffer *o) {   \
    forward(desc, q, k, v, o, DType::TYPE, #SUFFIX);                           \
  }                                                                            \
  void _mlir_ciface_ober_rt_cuda_attention_grad_##SUFFIX(                      \
      const ober_rt_buffer *desc, const ober_rt_buffer *q,                     \
      const ober_rt_buffer *k, const ober_rt_buffer *v,                        \
      const ober_rt_buffer *o, const ober_rt_buffer *dO, ober_rt_buffer *dq,   \
      ober_rt_buffer *dk, ober_rt_buffer *dv) {                                \
    backward(desc, q, k, v, o, dO, dq, dk, dv, DType::TYPE, #SUFFIX);          \
  }
OBER_RT_CUDA_ATTENTION_DEFINE(bf16, BF16)
OBER_RT_CUDA_ATTENTION_DEFINE(f16, F16)
#undef OBER_RT_CUDA_ATTENTION_DEFINE

} // extern "C"
