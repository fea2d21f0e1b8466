//===- CPUKernelsTest.cpp - the CPU kernel library's C interface ----------===//
//
// Part of Ober-Train. Calls the library as generated code does (unranked
// memrefs, an i64 descriptor) and checks products against a plain loop,
// and that kernels are created ahead of time only for names and
// descriptors the library knows.
//
//===----------------------------------------------------------------------===//

#include "ober/Runtime/CPUKernels.h"
#include "ober/Runtime/DType.h"

#include "../TestSupport.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

namespace {

using ober::rt::RankedMemref;

template <int R, typename T>
RankedMemref<R> ranked(std::vector<T> &data, const int64_t (&sizes)[R]) {
  return RankedMemref<R>::over(data.data(), sizes);
}

template <int R> ober_rt_buffer unranked(RankedMemref<R> &m) {
  return m.unranked();
}

/// `c = op(a) @ op(b)` through the library against a plain loop, for one
/// batch of `batch` products with `a` shared when `aBatch` is 1.
void matmul(int64_t batch, int64_t aBatch, int64_t m, int64_t n, int64_t k,
            bool ta, bool tb) {
  std::vector<int64_t> desc(OBER_MATMUL_FIELDS);
  desc[OBER_MATMUL_BATCH] = batch;
  desc[OBER_MATMUL_A_BATCH] = aBatch;
  desc[OBER_MATMUL_B_BATCH] = batch;
  desc[OBER_MATMUL_M] = m;
  desc[OBER_MATMUL_N] = n;
  desc[OBER_MATMUL_K] = k;
  desc[OBER_MATMUL_TRANSPOSE_A] = ta;
  desc[OBER_MATMUL_TRANSPOSE_B] = tb;
  desc[OBER_MATMUL_DTYPE] = static_cast<int64_t>(ober::rt::DType::F32);
  std::vector<float> a(aBatch * m * k), b(batch * k * n), c(batch * m * n);
  for (size_t i = 0; i < a.size(); ++i)
    a[i] = std::sin(0.37 * i);
  for (size_t i = 0; i < b.size(); ++i)
    b[i] = std::cos(0.11 * i);
  EXPECT(ober_rt_cpu_prepare_kernel(OBER_RT_CPU_MATMUL, desc.data(),
                                    desc.size()) == 0);
  auto d = ranked(desc, {OBER_MATMUL_FIELDS});
  auto ma = ranked(a, {aBatch, ta ? k : m, ta ? m : k});
  auto mb = ranked(b, {batch, tb ? n : k, tb ? k : n});
  auto mc = ranked(c, {batch, m, n});
  ober_rt_buffer ud = unranked(d), ua = unranked(ma), ub = unranked(mb),
                 uc = unranked(mc);
  _mlir_ciface_ober_rt_cpu_matmul(&ud, &ua, &ub, &uc);
  double worst = 0;
  for (int64_t p = 0; p < batch; ++p)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double sum = 0;
        const float *ap = a.data() + (aBatch == 1 ? 0 : p) * m * k;
        const float *bp = b.data() + p * k * n;
        for (int64_t l = 0; l < k; ++l)
          sum += double(ta ? ap[l * m + i] : ap[i * k + l]) *
                 double(tb ? bp[j * k + l] : bp[l * n + j]);
        worst = std::fmax(worst, std::fabs(sum - c[(p * m + i) * n + j]));
      }
  EXPECT(worst < 1e-4 * k);
}

/// A bf16 or f16 product (`type`): the operands as stored, the product
/// in f32 rounded once, so within half a unit in the last place of the
/// exact product of the stored operands (plus f32's error on the sum).
void lowPrecisionMatmul(ober::rt::DType type, const char *name,
                        void (*kernel)(const ober_rt_buffer *,
                                       const ober_rt_buffer *,
                                       const ober_rt_buffer *,
                                       ober_rt_buffer *)) {
  using ober::rt::loadFloat;
  using ober::rt::storeFloat;
  const int64_t batch = 2, m = 5, n = 7, k = 33;
  std::vector<int64_t> desc(OBER_MATMUL_FIELDS, 0);
  desc[OBER_MATMUL_BATCH] = desc[OBER_MATMUL_A_BATCH] = batch;
  desc[OBER_MATMUL_B_BATCH] = 1;
  desc[OBER_MATMUL_M] = m;
  desc[OBER_MATMUL_N] = n;
  desc[OBER_MATMUL_K] = k;
  desc[OBER_MATMUL_TRANSPOSE_B] = 1;
  desc[OBER_MATMUL_DTYPE] = static_cast<int64_t>(type);
  EXPECT(ober_rt_cpu_prepare_kernel(name, desc.data(), desc.size()) == 0);
  // The name and the descriptor's type must agree.
  EXPECT(ober_rt_cpu_prepare_kernel(OBER_RT_CPU_MATMUL, desc.data(),
                                    desc.size()) == -1);
  std::vector<uint16_t> a(batch * m * k), b(k * n), c(batch * m * n, 0xffff);
  for (size_t i = 0; i < a.size(); ++i)
    storeFloat(type, &a[i], 3 * std::sin(0.37 * i));
  for (size_t i = 0; i < b.size(); ++i)
    storeFloat(type, &b[i], std::cos(0.11 * i));
  auto d = ranked(desc, {OBER_MATMUL_FIELDS});
  auto ma = ranked(a, {batch, m, k});
  auto mb = ranked(b, {1, n, k});
  auto mc = ranked(c, {batch, m, n});
  ober_rt_buffer ud = unranked(d), ua = unranked(ma), ub = unranked(mb),
                 uc = unranked(mc);
  kernel(&ud, &ua, &ub, &uc);
  // A unit in the last place relative to the binade's start: 8 and 11
  // significant bits.
  double ulp = type == ober::rt::DType::BF16 ? 0x1p-7 : 0x1p-10;
  bool within = true;
  for (int64_t p = 0; p < batch; ++p)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double sum = 0, magnitude = 0;
        for (int64_t l = 0; l < k; ++l) {
          double term = loadFloat(type, &a[(p * m + i) * k + l]) *
                        loadFloat(type, &b[j * k + l]);
          sum += term;
          magnitude += std::fabs(term);
        }
        double got = loadFloat(type, &c[(p * m + i) * n + j]);
        within &= std::fabs(got - sum) <=
                  ulp / 2 * std::fabs(sum) + 1e-6 * magnitude;
      }
  EXPECT(within);
}

#ifdef OBER_RT_BF16_IN_FLOAT_REGISTER
/// The runtime's f32-to-bf16 rounding that generated bf16 code calls
/// (DType.cpp): ties to even, overflow to infinity, NaN kept quiet.
void compilerRuntimeRounding() {
  auto rounded = [](uint32_t bits) {
    float f, r;
    std::memcpy(&f, &bits, 4);
    r = __truncsfbf2(f);
    uint32_t out;
    std::memcpy(&out, &r, 4);
    return static_cast<uint16_t>(out);
  };
  EXPECT(rounded(0x3f800000) == 0x3f80);  // 1
  EXPECT(rounded(0x3f808000) == 0x3f80);  // a tie, to the even below
  EXPECT(rounded(0x3f818000) == 0x3f82);  // a tie, to the even above
  EXPECT(rounded(0x3f808001) == 0x3f81);  // above the tie
  EXPECT(rounded(0xbf80ffff) == 0xbf81);  // negative, up in magnitude
  EXPECT(rounded(0x7f7fffff) == 0x7f80);  // the largest float: infinity
  EXPECT(rounded(0xff800000) == 0xff80);  // -infinity
  EXPECT(rounded(0x00000001) == 0x0000);  // the smallest subnormal
  EXPECT((rounded(0x7f800001) & 0x7fc0) == 0x7fc0); // NaN, quiet
}
#endif

void unknownKernels() {
  std::vector<int64_t> desc(OBER_MATMUL_FIELDS, 1);
  EXPECT(ober_rt_cpu_prepare_kernel("ober_rt_cpu_fft", desc.data(),
                                    desc.size()) == -1);
  EXPECT(ober_rt_cpu_prepare_kernel(OBER_RT_CPU_MATMUL, desc.data(),
                                    OBER_MATMUL_FIELDS - 1) == -1);
  // A 2-D convolution's descriptor needs its seven arrays of two.
  std::vector<int64_t> conv(OBER_CONV_ARRAYS + 2 * OBER_CONV_NUM_ARRAYS - 1, 1);
  conv[OBER_CONV_SPATIAL] = 2;
  EXPECT(ober_rt_cpu_prepare_kernel(OBER_RT_CPU_CONV, conv.data(),
                                    conv.size()) == -1);
  conv[OBER_CONV_SPATIAL] = 4;
  conv.resize(OBER_CONV_ARRAYS + 4 * OBER_CONV_NUM_ARRAYS, 1);
  EXPECT(ober_rt_cpu_prepare_kernel(OBER_RT_CPU_CONV, conv.data(),
                                    conv.size()) == -1);
}

/// A 1x1 convolution of a [1, 2, 3, 3] input with a bias is a per-pixel
/// product.
void pointwiseConv() {
  std::vector<int64_t> desc = {2, 1, 2, 3, 1, 1};
  const int64_t arrays[OBER_CONV_NUM_ARRAYS][2] = {
      {3, 3}, {1, 1}, {3, 3}, {1, 1}, {1, 1}, {0, 0}, {0, 0}};
  for (const auto &a : arrays)
    desc.insert(desc.end(), a, a + 2);
  EXPECT(ober_rt_cpu_prepare_kernel(OBER_RT_CPU_CONV, desc.data(),
                                    desc.size()) == 0);
  std::vector<float> x(18), w(6), bias = {0.5f, -1, 2}, y(27);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = float(i) - 4;
  for (size_t i = 0; i < w.size(); ++i)
    w[i] = 0.25f * float(i) - 0.5f;
  auto d = ranked(desc, {int64_t(desc.size())});
  auto mx = ranked(x, {1, 2, 3, 3});
  auto mw = ranked(w, {3, 2, 1, 1});
  auto mbias = ranked(bias, {3});
  auto my = ranked(y, {1, 3, 3, 3});
  ober_rt_buffer ud = unranked(d), ux = unranked(mx), uw = unranked(mw),
                 ubias = unranked(mbias), uy = unranked(my);
  _mlir_ciface_ober_rt_cpu_conv(&ud, &ux, &uw, &ubias, &uy);
  double worst = 0;
  for (int o = 0; o < 3; ++o)
    for (int p = 0; p < 9; ++p) {
      double sum = bias[o];
      for (int c = 0; c < 2; ++c)
        sum += double(w[o * 2 + c]) * x[c * 9 + p];
      worst = std::fmax(worst, std::fabs(sum - y[o * 9 + p]));
    }
  EXPECT(worst < 1e-5);
}

} // namespace

int main() {
  ober_rt_cpu_set_threads(2);
  matmul(1, 1, 7, 5, 3, false, false);
  matmul(3, 1, 4, 6, 9, true, false);
  matmul(2, 2, 33, 17, 65, false, true);
  matmul(2, 2, 8, 8, 8, true, true);
  lowPrecisionMatmul(ober::rt::DType::BF16,
                     OBER_RT_CPU_MATMUL OBER_RT_MATMUL_SUFFIX_BF16,
                     _mlir_ciface_ober_rt_cpu_matmul_bf16);
  lowPrecisionMatmul(ober::rt::DType::F16,
                     OBER_RT_CPU_MATMUL OBER_RT_MATMUL_SUFFIX_F16,
                     _mlir_ciface_ober_rt_cpu_matmul_f16);
#ifdef OBER_RT_BF16_IN_FLOAT_REGISTER
  compilerRuntimeRounding();
#endif
  unknownKernels();
  pointwiseConv();
  return testSummary();
}
