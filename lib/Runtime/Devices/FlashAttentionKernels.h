//===- FlashAttentionKernels.h - attention in tiles on tensor cores -------===//
//
// Part of Ober-Train's runtime. The device code of the flash attention
// kernels (FlashAttention-2's scheme on WMMA tensor-core products), written
// once for two environments that define, before including this file:
//
//   OBER_FA_FN             the qualifier of device functions
//   OBER_FA_UNROLL         `#pragma unroll` where it matters (or nothing)
//   namespace fawmma       WMMA: fragment, load_matrix_sync, mma_sync,
//                          store_matrix_sync, fill_fragment, the layouts
//   threadIdx, blockIdx    as CUDA's
//   oberFaSync()           __syncthreads
//   oberFaAtomicAdd(p, x)  atomicAdd on a float
//   FaElement<E>           toFloat / fromFloat of the element type
//                          (round to nearest even)
//
// FlashAttention.cu is CUDA's (nvcc, sm_80 and later); the unit test
// FlashAttentionTest.cpp runs the same code on the host, a thread per CUDA
// thread, so that the tiling, masking and gradients are checked on
// machines without a GPU.
//
// Semantics (ober.attention and ober.attention_grad without a mask): per
// batch entry and head b, O = softmax(scale Q K^T [+ causal mask]) V with
// Q [Lq, D], K [Lk, D], V [Lk, Dv], a causal mask keeping key j for query
// i when j <= i. Scores and softmax are f32; the probabilities are rounded
// to the element type for their product with V (as FlashAttention does).
// The backward pass computes each row's log-sum-exp and D_i = dO_i . O_i
// (flashPrepare), then per block of keys dV = P^T dO, dK = scale dS^T Q
// and dQ += scale dS K (atomically, in f32; flashFinishDq rounds it), with
// dS = P (dO V^T - D).
//
// Blocks are 128 threads (4 warps); each warp owns 16 rows of a 64-row
// tile. D and Dv are at most 128, padded to multiples of 16 in shared
// memory with zeros.
//
//===----------------------------------------------------------------------===//

#ifndef OBER_RUNTIME_DEVICES_FLASHATTENTIONKERNELS_H
#define OBER_RUNTIME_DEVICES_FLASHATTENTIONKERNELS_H

#include "FlashAttentionShape.h"

namespace ober::flash {

namespace detail {

/// The region at byte `offset` of shared memory.
template <typename T> OBER_FA_FN T *at(char *shared, int64_t offset) {
  return reinterpret_cast<T *>(shared + offset);
}

/// Rows [row0, row0 + kTile) of the [rows, cols] matrix `src` into the
/// [kTile, ld] tile `dst`, zero beyond `rows` and `cols`.
template <typename E>
OBER_FA_FN void loadTile(E *dst, const E *src, int64_t row0, int64_t rows,
                         int cols, int ld) {
  E zero = FaElement<E>::fromFloat(0.0f);
  for (int e = threadIdx.x; e < kTile * ld; e += kThreads) {
    int r = e / ld, c = e % ld;
    dst[e] = row0 + r < rows && c < cols ? src[(row0 + r) * cols + c] : zero;
  }
}

/// out[16, kTile] (f32, row stride kTile) = a[16, k] b[kTile, k]^T, both
/// of the element type with row strides `ld` (k = ld, a multiple of 16):
/// a warp's rows of scores, or of dO V^T.
template <typename E>
OBER_FA_FN void productT(const E *a, const E *b, int ld, float *out) {
  fawmma::fragment<fawmma::accumulator, 16, 16, 16, float> acc[kTile / 16];
  for (int n = 0; n < kTile / 16; ++n)
    fawmma::fill_fragment(acc[n], 0.0f);
  for (int kk = 0; kk < ld; kk += 16) {
    fawmma::fragment<fawmma::matrix_a, 16, 16, 16, E, fawmma::row_major> fa;
    fawmma::load_matrix_sync(fa, a + kk, ld);
    for (int n = 0; n < kTile / 16; ++n) {
      // b's rows as the columns of a column-major B: B[k][n] = b[n][k].
      fawmma::fragment<fawmma::matrix_b, 16, 16, 16, E, fawmma::col_major> fb;
      fawmma::load_matrix_sync(fb, b + n * 16 * ld + kk, ld);
      fawmma::mma_sync(acc[n], fa, fb, acc[n]);
    }
  }
  for (int n = 0; n < kTile / 16; ++n)
    fawmma::store_matrix_sync(out + n * 16, acc[n], kTile,
                              fawmma::mem_row_major);
}

/// out[16, ld] (f32, row stride ld) = a[16, kTile] (row stride kTile)
/// b[kTile, ld] (row stride ld), or out += a b with `accumulate`: a warp's
/// rows of P V (added to the output's), or of dS K.
template <typename E>
OBER_FA_FN void product(const E *a, const E *b, int ld, float *out,
                        bool accumulate) {
  for (int n = 0; n < ld; n += 16) {
    fawmma::fragment<fawmma::accumulator, 16, 16, 16, float> acc;
    if (accumulate)
      fawmma::load_matrix_sync(acc, out + n, ld, fawmma::mem_row_major);
    else
      fawmma::fill_fragment(acc, 0.0f);
    for (int kk = 0; kk < kTile; kk += 16) {
      fawmma::fragment<fawmma::matrix_a, 16, 16, 16, E, fawmma::row_major> fa;
      fawmma::fragment<fawmma::matrix_b, 16, 16, 16, E, fawmma::row_major> fb;
      fawmma::load_matrix_sync(fa, a + kk, kTile);
      fawmma::load_matrix_sync(fb, b + kk * ld + n, ld);
      fawmma::mma_sync(acc, fa, fb, acc);
    }
    fawmma::store_matrix_sync(out + n, acc, ld, fawmma::mem_row_major);
  }
}

/// Whether query i sees key j.
OBER_FA_FN bool sees(const Shape &s, int64_t i, int64_t j) {
  return i < s.lq && j < s.lk && (!s.causal || j <= i);
}

/// The keys the queries [q0, q0 + kTile) see: [0, end).
OBER_FA_FN int64_t keyEnd(const Shape &s, int64_t q0) {
  int64_t last = q0 + kTile;
  return s.causal && last < s.lk ? last : s.lk;
}

/// The forward pass over one block of queries (blockIdx.x) of one batch
/// entry and head (blockIdx.y): the output (`values`), or only each row's
/// log-sum-exp (`lse`, for the backward pass).
template <typename E, bool values>
OBER_FA_FN void forwardBlock(const E *q, const E *k, const E *v, E *o,
                             float *lse, const Shape &s, char *shared) {
  int dp = padded(s.d), dvp = padded(s.dv);
  int64_t b = blockIdx.y, q0 = int64_t(blockIdx.x) * kTile;
  int tid = threadIdx.x, warp = tid / 32;
  ForwardLayout l = forwardLayout(s, sizeof(E), values);
  E *sq = at<E>(shared, l.q), *sk = at<E>(shared, l.k), *sv = at<E>(shared, l.v),
    *sp = at<E>(shared, l.p);
  float *ss = at<float>(shared, l.scores), *so = at<float>(shared, l.out),
        *sm = at<float>(shared, l.max), *sl = at<float>(shared, l.sum),
        *salpha = at<float>(shared, l.rescale);
  q += b * s.lq * s.d;
  k += b * s.lk * s.d;
  if (values)
    v += b * s.lk * s.dv;
  loadTile(sq, q, q0, s.lq, s.d, dp);
  if (values)
    for (int e = tid; e < kTile * dvp; e += kThreads)
      so[e] = 0;
  for (int r = tid; r < kTile; r += kThreads) {
    sm[r] = -INFINITY;
    sl[r] = 0;
  }
  int64_t end = keyEnd(s, q0);
  for (int64_t k0 = 0; k0 < end; k0 += kTile) {
    oberFaSync(); // the last tile's products and updates are done
    loadTile(sk, k, k0, s.lk, s.d, dp);
    if (values)
      loadTile(sv, v, k0, s.lk, s.dv, dvp);
    oberFaSync();
    productT(sq + warp * 16 * dp, sk, dp, ss + warp * 16 * kTile);
    oberFaSync();
    if (tid < kTile) {
      // Row tid: the online softmax over this tile's keys. Each thread
      // starts at its own column, so that the warp's threads read
      // different banks of shared memory.
      int64_t i = q0 + tid;
      float *row = ss + tid * kTile, old = sm[tid], m = old;
      for (int step = 0; step < kTile; ++step) {
        int c = (step + tid) % kTile;
        float x = sees(s, i, k0 + c) ? row[c] * s.scale : -INFINITY;
        row[c] = x;
        m = fmaxf(m, x);
      }
      float alpha = m == -INFINITY ? 1.0f : expf(old - m), sum = 0;
      for (int step = 0; step < kTile; ++step) {
        int c = (step + tid) % kTile;
        float p = row[c] == -INFINITY ? 0.0f : expf(row[c] - m);
        sum += p;
        if (values)
          sp[tid * kTile + c] = FaElement<E>::fromFloat(p);
      }
      sl[tid] = sl[tid] * alpha + sum;
      sm[tid] = m;
      salpha[tid] = alpha;
    }
    if (values) {
      // The output so far rescaled to the new maxima, then P V added to
      // it on the tensor cores.
      oberFaSync();
      for (int e = tid; e < kTile * dvp; e += kThreads)
        so[e] *= salpha[e / dvp];
      oberFaSync();
      product(sp + warp * 16 * kTile, sv, dvp, so + warp * 16 * dvp,
              /*accumulate=*/true);
    }
  }
  oberFaSync();
  if (values) {
    for (int e = tid; e < kTile * s.dv; e += kThreads) {
      int r = e / s.dv, c = e % s.dv;
      if (q0 + r < s.lq)
        o[(b * s.lq + q0 + r) * s.dv + c] =
            FaElement<E>::fromFloat(so[r * dvp + c] / sl[r]);
    }
  } else {
    for (int r = tid; r < kTile; r += kThreads)
      if (q0 + r < s.lq)
        lse[b * s.lq + q0 + r] = sm[r] + logf(sl[r]);
  }
}

/// D_i = dO_i . O_i for the queries of one block, by one thread a row.
template <typename E>
OBER_FA_FN void deltaBlock(const E *o, const E *dO, float *delta,
                           const Shape &s) {
  int64_t b = blockIdx.y, q0 = int64_t(blockIdx.x) * kTile;
  for (int r = threadIdx.x; r < kTile; r += kThreads) {
    int64_t i = q0 + r;
    if (i >= s.lq)
      continue;
    const E *orow = o + (b * s.lq + i) * s.dv, *grow = dO + (b * s.lq + i) * s.dv;
    float sum = 0;
    for (int c = 0; c < s.dv; ++c)
      sum += FaElement<E>::toFloat(orow[c]) * FaElement<E>::toFloat(grow[c]);
    delta[b * s.lq + i] = sum;
  }
}

using Accumulators =
    fawmma::fragment<fawmma::accumulator, 16, 16, 16, float>[kMaxHead / 16];

/// The warps' 16 rows each of `g` (`ld` columns, `cols` of them kept) times
/// `scale`, rounded, into the first `rows` rows of `out` (row stride
/// `cols`), through `scratch` (kTile x ld floats of shared memory).
template <typename E>
OBER_FA_FN void storeKeyRows(Accumulators &g, int ld, int cols, float scale,
                             float *scratch, E *out, int64_t rows) {
  int tid = threadIdx.x, warp = tid / 32;
  oberFaSync();
  OBER_FA_UNROLL
  for (int n = 0; n < kMaxHead / 16; ++n)
    if (n * 16 < ld)
      fawmma::store_matrix_sync(scratch + warp * 16 * ld + n * 16, g[n], ld,
                                fawmma::mem_row_major);
  oberFaSync();
  for (int e = tid; e < kTile * cols; e += kThreads) {
    int r = e / cols, c = e % cols;
    if (r < rows)
      out[r * cols + c] = FaElement<E>::fromFloat(scratch[r * ld + c] * scale);
  }
}

/// The gradients from one block of keys (blockIdx.x) of one batch entry
/// and head (blockIdx.y): its dK and dV, and its share of dQ added to
/// `dqAcc` (f32, [batch, lq, d]).
template <typename E>
OBER_FA_FN void backwardBlock(const E *q, const E *k, const E *v, const E *dO,
                              const float *lse, const float *delta,
                              float *dqAcc, E *dk, E *dv, const Shape &s,
                              char *shared) {
  int dp = padded(s.d), dvp = padded(s.dv);
  int64_t b = blockIdx.y, k0 = int64_t(blockIdx.x) * kTile;
  int tid = threadIdx.x, warp = tid / 32;
  BackwardLayout l = backwardLayout(s, sizeof(E));
  E *sk = at<E>(shared, l.k), *sv = at<E>(shared, l.v), *sq = at<E>(shared, l.q),
    *sdo = at<E>(shared, l.dO), *sp = at<E>(shared, l.p),
    *sds = at<E>(shared, l.dS);
  float *ss = at<float>(shared, l.scores), *sdp = ss + kTile * kTile,
        *slse = at<float>(shared, l.lse), *sdelta = at<float>(shared, l.delta);
  q += b * s.lq * s.d;
  dO += b * s.lq * s.dv;
  loadTile(sk, k + b * s.lk * s.d, k0, s.lk, s.d, dp);
  loadTile(sv, v + b * s.lk * s.dv, k0, s.lk, s.dv, dvp);
  // This warp's 16 keys: dK and dV accumulate over the query tiles. The
  // loops over them run to kMaxHead / 16, unrolled, so that the fragments
  // stay in registers.
  Accumulators gk, gv;
  OBER_FA_UNROLL
  for (int n = 0; n < kMaxHead / 16; ++n) {
    fawmma::fill_fragment(gk[n], 0.0f);
    fawmma::fill_fragment(gv[n], 0.0f);
  }
  // Causal: queries before the block's first key see none of its keys.
  int64_t first = s.causal ? k0 : 0;
  for (int64_t q0 = first; q0 < s.lq; q0 += kTile) {
    oberFaSync(); // the last tile's products are done
    loadTile(sq, q, q0, s.lq, s.d, dp);
    loadTile(sdo, dO, q0, s.lq, s.dv, dvp);
    for (int r = tid; r < kTile; r += kThreads) {
      bool in = q0 + r < s.lq;
      slse[r] = in ? lse[b * s.lq + q0 + r] : 0.0f;
      sdelta[r] = in ? delta[b * s.lq + q0 + r] : 0.0f;
    }
    oberFaSync();
    productT(sq + warp * 16 * dp, sk, dp, ss + warp * 16 * kTile);
    productT(sdo + warp * 16 * dvp, sv, dvp, sdp + warp * 16 * kTile);
    oberFaSync();
    for (int e = tid; e < kTile * kTile; e += kThreads) {
      int r = e / kTile, c = e % kTile;
      float p = sees(s, q0 + r, k0 + c) ? expf(ss[e] * s.scale - slse[r]) : 0.0f;
      sp[e] = FaElement<E>::fromFloat(p);
      sds[e] = FaElement<E>::fromFloat(p * (sdp[e] - sdelta[r]));
    }
    oberFaSync();
    // dV += P^T dO and dK += dS^T Q over this tile's queries: the warp's
    // keys are columns of P and dS, read as column-major rows of A.
    for (int kk = 0; kk < kTile; kk += 16) {
      fawmma::fragment<fawmma::matrix_a, 16, 16, 16, E, fawmma::col_major> pt,
          dst;
      fawmma::load_matrix_sync(pt, sp + kk * kTile + warp * 16, kTile);
      fawmma::load_matrix_sync(dst, sds + kk * kTile + warp * 16, kTile);
      OBER_FA_UNROLL
      for (int n = 0; n < kMaxHead / 16; ++n) {
        fawmma::fragment<fawmma::matrix_b, 16, 16, 16, E, fawmma::row_major> g;
        if (n * 16 < dvp) {
          fawmma::load_matrix_sync(g, sdo + kk * dvp + n * 16, dvp);
          fawmma::mma_sync(gv[n], pt, g, gv[n]);
        }
        if (n * 16 < dp) {
          fawmma::load_matrix_sync(g, sq + kk * dp + n * 16, dp);
          fawmma::mma_sync(gk[n], dst, g, gk[n]);
        }
      }
    }
    // dQ's share: this warp's 16 queries, dS K, into the scores' space.
    product(sds + warp * 16 * kTile, sk, dp, ss + warp * 16 * dp,
            /*accumulate=*/false);
    oberFaSync();
    for (int e = tid; e < kTile * s.d; e += kThreads) {
      int r = e / s.d, c = e % s.d;
      if (q0 + r < s.lq)
        oberFaAtomicAdd(&dqAcc[(b * s.lq + q0 + r) * s.d + c],
                        ss[r * dp + c] * s.scale);
    }
  }
  // dK (scaled) and dV through shared memory to the element type.
  storeKeyRows(gk, dp, s.d, s.scale, ss, dk + (b * s.lk + k0) * s.d, s.lk - k0);
  storeKeyRows(gv, dvp, s.dv, 1.0f, ss, dv + (b * s.lk + k0) * s.dv,
               s.lk - k0);
}

/// dq = dqAcc rounded to the element type, element `i` by thread i of the
/// grid (kGridRow blocks of kThreads along x, then y).
template <typename E>
OBER_FA_FN void finishDqElement(const float *dqAcc, E *dq, int64_t n) {
  int64_t i =
      (int64_t(blockIdx.y) * kGridRow + blockIdx.x) * kThreads + threadIdx.x;
  if (i < n)
    dq[i] = FaElement<E>::fromFloat(dqAcc[i]);
}

} // namespace detail
} // namespace ober::flash

#endif // OBER_RUNTIME_DEVICES_FLASHATTENTIONKERNELS_H
