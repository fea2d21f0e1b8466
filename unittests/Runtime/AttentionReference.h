//===- AttentionReference.h - attention and its gradients in double -*- C++ -*-===//
//
// Part of Ober-Train. What the flash attention kernels are checked against
// (on the host in FlashAttentionTest, on a GPU in CUDARuntimeGPUTest):
// ober.attention and ober.attention_grad without a mask, in double, from
// inputs already rounded to the element type.
//
//===----------------------------------------------------------------------===//

#ifndef OBER_UNITTESTS_RUNTIME_ATTENTIONREFERENCE_H
#define OBER_UNITTESTS_RUNTIME_ATTENTIONREFERENCE_H

#include <cmath>
#include <cstdint>
#include <functional>
#include <vector>

namespace ober::rt::test {

struct AttentionSizes {
  int64_t batch, lq, lk, d, dv;
  bool causal;
  double scale;
};

struct AttentionResults {
  /// The output, and the gradients given the output rounded by `round`
  /// (the attention_grad's operand is the rounded forward result).
  std::vector<double> o, dq, dk, dv;
};

/// q [batch, lq, d], k [batch, lk, d], v [batch, lk, dv], dO [batch, lq,
/// dv], row-major.
inline AttentionResults
attentionReference(const AttentionSizes &s, const std::vector<double> &q,
                   const std::vector<double> &k, const std::vector<double> &v,
                   const std::vector<double> &dO,
                   const std::function<double(double)> &round) {
  AttentionResults r;
  r.o.assign(s.batch * s.lq * s.dv, 0);
  r.dq.assign(s.batch * s.lq * s.d, 0);
  r.dk.assign(s.batch * s.lk * s.d, 0);
  r.dv.assign(s.batch * s.lk * s.dv, 0);
  std::vector<double> p(s.batch * s.lq * s.lk);
  for (int64_t b = 0; b < s.batch; ++b)
    for (int64_t i = 0; i < s.lq; ++i) {
      std::vector<double> row(s.lk, -INFINITY);
      double m = -INFINITY, sum = 0;
      for (int64_t j = 0; j < s.lk; ++j)
        if (!s.causal || j <= i) {
          double x = 0;
          for (int64_t c = 0; c < s.d; ++c)
            x += q[(b * s.lq + i) * s.d + c] * k[(b * s.lk + j) * s.d + c];
          row[j] = x * s.scale;
          m = std::fmax(m, row[j]);
        }
      for (double x : row)
        sum += x == -INFINITY ? 0 : std::exp(x - m);
      for (int64_t j = 0; j < s.lk; ++j) {
        double pij = row[j] == -INFINITY ? 0 : std::exp(row[j] - m) / sum;
        p[(b * s.lq + i) * s.lk + j] = pij;
        for (int64_t c = 0; c < s.dv; ++c)
          r.o[(b * s.lq + i) * s.dv + c] += pij * v[(b * s.lk + j) * s.dv + c];
      }
    }
  for (int64_t b = 0; b < s.batch; ++b)
    for (int64_t i = 0; i < s.lq; ++i) {
      double delta = 0;
      for (int64_t c = 0; c < s.dv; ++c)
        delta += dO[(b * s.lq + i) * s.dv + c] *
                 round(r.o[(b * s.lq + i) * s.dv + c]);
      for (int64_t j = 0; j < s.lk; ++j) {
        double pij = p[(b * s.lq + i) * s.lk + j], dp = 0;
        for (int64_t c = 0; c < s.dv; ++c) {
          double g = dO[(b * s.lq + i) * s.dv + c];
          dp += g * v[(b * s.lk + j) * s.dv + c];
          r.dv[(b * s.lk + j) * s.dv + c] += pij * g;
        }
        double ds = pij * (dp - delta) * s.scale;
        for (int64_t c = 0; c < s.d; ++c) {
          r.dq[(b * s.lq + i) * s.d + c] += ds * k[(b * s.lk + j) * s.d + c];
          r.dk[(b * s.lk + j) * s.d + c] += ds * q[(b * s.lq + i) * s.d + c];
        }
      }
    }
  return r;
}

/// max |got - want| / max |want| (NaN counts as infinitely far).
inline double relativeError(const std::vector<double> &got,
                            const std::vector<double> &want) {
  double err = 0, scale = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    err = std::fmax(err, std::isnan(got[i]) ? INFINITY
                                            : std::fabs(got[i] - want[i]));
    scale = std::fmax(scale, std::fabs(want[i]));
  }
  return err / (scale > 0 ? scale : 1);
}

} // namespace ober::rt::test

#endif // OBER_UNITTESTS_RUNTIME_ATTENTIONREFERENCE_H
