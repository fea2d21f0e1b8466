//===- FlashAttentionShape.h - sizes of the flash attention kernels -------===//
//
// Part of Ober-Train's runtime. What the host and the device code of the
// flash attention kernels (FlashAttentionKernels.h) share: the shape
// argument and the shared memory each kernel needs.
//
//===----------------------------------------------------------------------===//

#ifndef OBER_RUNTIME_DEVICES_FLASHATTENTIONSHAPE_H
#define OBER_RUNTIME_DEVICES_FLASHATTENTIONSHAPE_H

#include "ober/Runtime/CUDAKernels.h"

#include <cstdint>

#ifndef OBER_FA_HD
#define OBER_FA_HD inline
#endif

namespace ober::flash {

/// Rows of a tile (queries of a forward block, keys of a backward block),
/// columns of the other operand's tile, threads of a block, the largest
/// head dimension.
constexpr int kTile = OBER_ATTENTION_TILE, kThreads = 128,
              kMaxHead = OBER_ATTENTION_MAX_HEAD;
/// Blocks a grid row of the element-wise kernel holds (CUDA's y limit,
/// which bounds x too here).
constexpr int64_t kGridRow = OBER_ATTENTION_MAX_BATCH;

/// One attention's sizes; the kernels' argument.
struct Shape {
  int64_t batch = 0, lq = 0, lk = 0;
  int32_t d = 0, dv = 0;
  int32_t causal = 0;
  float scale = 1;
};

OBER_FA_HD int padded(int n) { return (n + 15) / 16 * 16; }

/// Shared memory of a region of `n` elements of `bytes` each, rounded to
/// 128 bytes (WMMA pointers are 32-byte aligned).
OBER_FA_HD int64_t region(int64_t n, int64_t bytes) {
  return (n * bytes + 127) / 128 * 128;
}

/// Lays out consecutive regions of shared memory: `take` returns a region's
/// byte offset.
struct Regions {
  int64_t bytes = 0;
  OBER_FA_HD int64_t take(int64_t n, int64_t elementBytes) {
    int64_t at = bytes;
    bytes += region(n, elementBytes);
    return at;
  }
};

/// The forward kernels' shared memory (byte offsets): Q, K, V tiles and
/// probabilities (element type), scores (f32), the output accumulator
/// (which P V adds to) and each row's running max, sum and rescaling
/// (f32). Without `values` (the kernel that only finds each row's
/// log-sum-exp) V, P and the output take no room.
struct ForwardLayout {
  int64_t q, k, v, p, scores, out, max, sum, rescale, bytes;
};
OBER_FA_HD ForwardLayout forwardLayout(const Shape &s, int64_t eBytes,
                                       bool values) {
  int dp = padded(s.d), dvp = values ? padded(s.dv) : 0;
  Regions r;
  ForwardLayout l;
  l.q = r.take(kTile * dp, eBytes);
  l.k = r.take(kTile * dp, eBytes);
  l.v = r.take(kTile * dvp, eBytes);
  l.p = r.take(values ? kTile * kTile : 0, eBytes);
  l.scores = r.take(kTile * kTile, 4);
  l.out = r.take(kTile * dvp, 4);
  l.max = r.take(kTile, 4);
  l.sum = r.take(kTile, 4);
  l.rescale = r.take(kTile, 4);
  l.bytes = r.bytes;
  return l;
}

/// The backward kernel's: K, V, Q, dO tiles, P and dS (element type),
/// scores and dP side by side (f32, reused for a tile of dQ and for dK and
/// dV at the end), each row's log-sum-exp and D.
struct BackwardLayout {
  int64_t k, v, q, dO, p, dS, scores, lse, delta, bytes;
};
OBER_FA_HD BackwardLayout backwardLayout(const Shape &s, int64_t eBytes) {
  int dp = padded(s.d), dvp = padded(s.dv), wide = dp > dvp ? dp : dvp;
  Regions r;
  BackwardLayout l;
  l.k = r.take(kTile * dp, eBytes);
  l.v = r.take(kTile * dvp, eBytes);
  l.q = r.take(kTile * dp, eBytes);
  l.dO = r.take(kTile * dvp, eBytes);
  l.p = r.take(kTile * kTile, eBytes);
  l.dS = r.take(kTile * kTile, eBytes);
  l.scores = r.take(kTile * (wide > 2 * kTile ? wide : 2 * kTile), 4);
  l.lse = r.take(kTile, 4);
  l.delta = r.take(kTile, 4);
  l.bytes = r.bytes;
  return l;
}

} // namespace ober::flash

#endif // OBER_RUNTIME_DEVICES_FLASHATTENTIONSHAPE_H
