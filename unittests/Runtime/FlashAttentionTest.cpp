//===- FlashAttentionTest.cpp - the flash attention kernels on the host ---===//
//
// Part of Ober-Train. Runs the device code of FlashAttentionKernels.h on
// the host, a thread per CUDA thread of a block and one block after
// another, with WMMA emulated as the CUDA guide defines it (a fragment is
// the 16 x 16 matrix it holds; loads read row- or column-major with the
// given leading dimension; one lane stores, and the kernels synchronize
// before others read). Attention and its gradients in bf16 and f16 are
// checked against a double-precision reference over odd shapes: lengths
// that are not multiples of the 64-row tiles, head sizes that are not
// multiples of 16, causal and not, more queries than keys and fewer.
//
//===----------------------------------------------------------------------===//

#include "ober/Runtime/DType.h"

#include "../TestSupport.h"
#include "AttentionReference.h"

#include <cmath>
#include <condition_variable>
#include <cstring>
#include <functional>
#include <mutex>
#include <thread>
#include <type_traits>
#include <vector>

namespace {

/// The element types, stored as the runtime stores them.
template <ober::rt::DType T> struct Half16 {
  uint16_t bits;
};
using Bf16 = Half16<ober::rt::DType::BF16>;
using F16 = Half16<ober::rt::DType::F16>;

struct Dim3 {
  unsigned x = 0, y = 0, z = 0;
};
thread_local Dim3 threadIdx, blockIdx;

/// __syncthreads for the threads of one emulated block.
class BlockBarrier {
public:
  explicit BlockBarrier(int threads) : threads(threads) {}
  void wait() {
    std::unique_lock<std::mutex> lock(mutex);
    uint64_t generation = passed;
    if (++arrived == threads) {
      arrived = 0;
      ++passed;
      changed.notify_all();
      return;
    }
    changed.wait(lock, [&] { return passed != generation; });
  }

private:
  int threads, arrived = 0;
  uint64_t passed = 0;
  std::mutex mutex;
  std::condition_variable changed;
};
thread_local BlockBarrier *barrier = nullptr;
std::mutex atomics;

} // namespace

template <typename E> struct FaElement;
template <ober::rt::DType T> struct FaElement<Half16<T>> {
  static float toFloat(Half16<T> x) {
    return static_cast<float>(ober::rt::loadFloat(T, &x.bits));
  }
  static Half16<T> fromFloat(float x) {
    Half16<T> h;
    ober::rt::storeFloat(T, &h.bits, x);
    return h;
  }
};

#define OBER_FA_FN inline
#define OBER_FA_UNROLL
inline void oberFaSync() { barrier->wait(); }
inline void oberFaAtomicAdd(float *p, float x) {
  std::lock_guard<std::mutex> lock(atomics);
  *p += x;
}

/// WMMA 16 x 16 x 16 as the CUDA programming guide defines it.
namespace fawmma {
struct matrix_a {};
struct matrix_b {};
struct accumulator {};
struct row_major {};
struct col_major {};
enum layout_t { mem_row_major, mem_col_major };

template <typename Use, int M, int N, int K, typename T, typename Layout = void>
struct fragment {
  float x[M * N]; // element (r, c) of the matrix at x[r * N + c]
};

template <typename Use, typename T, typename Layout>
void load_matrix_sync(fragment<Use, 16, 16, 16, T, Layout> &f, const T *p,
                      unsigned ldm) {
  for (unsigned r = 0; r < 16; ++r)
    for (unsigned c = 0; c < 16; ++c)
      f.x[r * 16 + c] = FaElement<T>::toFloat(
          std::is_same<Layout, row_major>::value ? p[r * ldm + c]
                                                 : p[c * ldm + r]);
}

template <typename T, typename LA, typename LB>
void mma_sync(fragment<accumulator, 16, 16, 16, float> &d,
              const fragment<matrix_a, 16, 16, 16, T, LA> &a,
              const fragment<matrix_b, 16, 16, 16, T, LB> &b,
              const fragment<accumulator, 16, 16, 16, float> &c) {
  float out[256];
  for (int r = 0; r < 16; ++r)
    for (int n = 0; n < 16; ++n) {
      float acc = c.x[r * 16 + n];
      for (int k = 0; k < 16; ++k)
        acc += a.x[r * 16 + k] * b.x[k * 16 + n];
      out[r * 16 + n] = acc;
    }
  std::memcpy(d.x, out, sizeof(out));
}

inline void load_matrix_sync(fragment<accumulator, 16, 16, 16, float> &f,
                             const float *p, unsigned ldm, layout_t layout) {
  for (unsigned r = 0; r < 16; ++r)
    for (unsigned c = 0; c < 16; ++c)
      f.x[r * 16 + c] = p[layout == mem_row_major ? r * ldm + c : c * ldm + r];
}

inline void store_matrix_sync(float *p,
                              const fragment<accumulator, 16, 16, 16, float> &f,
                              unsigned ldm, layout_t layout) {
  if (threadIdx.x % 32 != 0)
    return; // one lane of the warp writes what they all hold
  for (unsigned r = 0; r < 16; ++r)
    for (unsigned c = 0; c < 16; ++c)
      p[layout == mem_row_major ? r * ldm + c : c * ldm + r] = f.x[r * 16 + c];
}

template <typename Use, typename T, typename Layout>
void fill_fragment(fragment<Use, 16, 16, 16, T, Layout> &f, float v) {
  for (float &x : f.x)
    x = v;
}
} // namespace fawmma

#include "../../lib/Runtime/Devices/FlashAttentionKernels.h"

namespace {
using namespace ober::flash;
namespace test = ober::rt::test;

/// Runs `body` as the grid [gx, gy] of blocks of kThreads threads, each
/// block with `sharedBytes` of shared memory.
void launch(unsigned gx, unsigned gy, int64_t sharedBytes,
            const std::function<void(char *)> &body) {
  // Guard bytes after the block's shared memory: a kernel that writes past
  // what its layout asks for fails the test.
  constexpr size_t kGuard = 64;
  constexpr char kPattern = 0x5a;
  for (unsigned by = 0; by < gy; ++by)
    for (unsigned bx = 0; bx < gx; ++bx) {
      std::vector<char> shared(static_cast<size_t>(sharedBytes) + 128 + kGuard,
                               kPattern);
      char *base = shared.data() + (128 - reinterpret_cast<uintptr_t>(
                                              shared.data()) % 128) % 128;
      struct CheckGuard {
        const char *guard;
        ~CheckGuard() {
          for (size_t i = 0; i < kGuard; ++i)
            if (guard[i] != kPattern) {
              std::fprintf(stderr, "a kernel wrote past its shared memory\n");
              ++testFailures();
              return;
            }
        }
      } check{base + sharedBytes};
      BlockBarrier block(kThreads);
      std::vector<std::thread> threads;
      for (int t = 0; t < kThreads; ++t)
        threads.emplace_back([&, t] {
          threadIdx = {static_cast<unsigned>(t), 0, 0};
          blockIdx = {bx, by, 0};
          barrier = &block;
          body(base);
        });
      for (std::thread &t : threads)
        t.join();
    }
}

unsigned tiles(int64_t n) { return static_cast<unsigned>((n + kTile - 1) / kTile); }

/// Deterministic values in [-1, 1).
struct Draw {
  uint64_t state;
  double next() {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<double>(state >> 11) / double(1ull << 53) * 2 - 1;
  }
};

template <typename E> std::vector<E> drawn(size_t n, Draw &draw) {
  std::vector<E> v(n);
  for (E &x : v)
    x = FaElement<E>::fromFloat(static_cast<float>(draw.next()));
  return v;
}

template <typename E> std::vector<double> values(const std::vector<E> &v) {
  std::vector<double> out(v.size());
  for (size_t i = 0; i < v.size(); ++i)
    out[i] = FaElement<E>::toFloat(v[i]);
  return out;
}

/// One attention, forward and backward, kernels against the reference.
template <typename E>
void checkAttention(Shape s, double tolerance, const char *what) {
  Draw draw{static_cast<uint64_t>(s.lq * 131 + s.lk * 7 + s.d + s.causal)};
  size_t nq = s.batch * s.lq, nk = s.batch * s.lk;
  std::vector<E> q = drawn<E>(nq * s.d, draw), k = drawn<E>(nk * s.d, draw),
                 v = drawn<E>(nk * s.dv, draw), dO = drawn<E>(nq * s.dv, draw);
  auto round = [](double x) {
    return double(FaElement<E>::toFloat(FaElement<E>::fromFloat(float(x))));
  };
  test::AttentionResults want = test::attentionReference(
      {s.batch, s.lq, s.lk, s.d, s.dv, s.causal != 0, s.scale}, values(q),
      values(k), values(v), values(dO), round);
  std::vector<E> oRounded(want.o.size());
  for (size_t i = 0; i < want.o.size(); ++i)
    oRounded[i] = FaElement<E>::fromFloat(static_cast<float>(want.o[i]));

  // The kernels, as FlashAttention.cpp launches them.
  std::vector<E> out(want.o.size()), gq(want.dq.size()), gk(want.dk.size()),
      gv(want.dv.size());
  std::vector<float> lse(nq), delta(nq), dqAcc(want.dq.size(), 0.0f);
  auto bytes = static_cast<int64_t>(sizeof(E));
  unsigned batch = static_cast<unsigned>(s.batch);
  launch(tiles(s.lq), batch, forwardLayout(s, bytes, true).bytes,
         [&](char *shared) {
    detail::forwardBlock<E, true>(q.data(), k.data(), v.data(), out.data(),
                                  nullptr, s, shared);
  });
  launch(tiles(s.lq), batch, forwardLayout(s, bytes, false).bytes,
         [&](char *shared) {
    detail::forwardBlock<E, false>(q.data(), k.data(), nullptr, nullptr,
                                   lse.data(), s, shared);
  });
  launch(tiles(s.lq), batch, 0, [&](char *) {
    detail::deltaBlock<E>(oRounded.data(), dO.data(), delta.data(), s);
  });
  launch(tiles(s.lk), batch, backwardLayout(s, bytes).bytes, [&](char *shared) {
    detail::backwardBlock<E>(q.data(), k.data(), v.data(), dO.data(),
                             lse.data(), delta.data(), dqAcc.data(), gk.data(),
                             gv.data(), s, shared);
  });
  int64_t n = static_cast<int64_t>(want.dq.size());
  launch(static_cast<unsigned>((n + kThreads - 1) / kThreads), 1, 0,
         [&](char *) { detail::finishDqElement<E>(dqAcc.data(), gq.data(), n); });

  for (auto [name, err] :
       {std::pair("output", test::relativeError(values(out), want.o)),
        std::pair("dq", test::relativeError(values(gq), want.dq)),
        std::pair("dk", test::relativeError(values(gk), want.dk)),
        std::pair("dv", test::relativeError(values(gv), want.dv))}) {
    if (err <= tolerance)
      continue;
    std::fprintf(stderr, "%s: %s differs by %.3g of its largest (tolerance %g)\n",
                 what, name, err, tolerance);
    ++testFailures();
  }
}

Shape shape(int64_t batch, int64_t lq, int64_t lk, int d, int dv, bool causal) {
  Shape s;
  s.batch = batch;
  s.lq = lq;
  s.lk = lk;
  s.d = d;
  s.dv = dv;
  s.causal = causal;
  s.scale = static_cast<float>(1 / std::sqrt(double(d)));
  return s;
}

} // namespace

int main() {
  // bf16 keeps 8 bits: the rounded probabilities and dS cost about 1%.
  checkAttention<Bf16>(shape(2, 70, 70, 24, 40, true), 2e-2, "bf16 causal 70x70");
  checkAttention<Bf16>(shape(1, 45, 130, 64, 64, false), 2e-2, "bf16 45x130");
  checkAttention<Bf16>(shape(2, 45, 130, 32, 32, true), 2e-2,
                       "bf16 causal 45x130");
  checkAttention<Bf16>(shape(1, 130, 45, 128, 128, true), 2e-2,
                       "bf16 causal 130x45, head 128");
  checkAttention<F16>(shape(2, 64, 64, 16, 8, true), 4e-3, "f16 causal 64x64");
  checkAttention<F16>(shape(1, 3, 200, 40, 24, false), 4e-3, "f16 3x200");
  return testSummary();
}
