//===- ContractionKernels.cpp - matmul, conv2d, pooling, attention --------===//
//
// Part of Ober-Train. Sums accumulate in double and round once.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"
#include "ober/Dialect/Ober/IR/OberOps.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::ober;
using namespace mlir::ober::reference;
using namespace mlir::ober::reference::detail;

namespace {

/// Batched matmul of `a` [batchA..., M, K] and `b` [batchB..., K, N] into
/// `out` viewed as [batch..., M, N], with NumPy batch broadcasting.
void batchedMatmul(const Tensor &a, ArrayRef<int64_t> aShape, const Tensor &b,
                   ArrayRef<int64_t> bShape, Tensor &out,
                   ArrayRef<int64_t> batch) {
  int64_t m = aShape[aShape.size() - 2], k = aShape.back(), n = bShape.back();
  auto batchStrides = [&](ArrayRef<int64_t> shape, int64_t matrixSize) {
    SmallVector<int64_t> s =
        broadcastStrides(shape.drop_back(2), batch);
    for (int64_t &x : s)
      x *= matrixSize;
    return s;
  };
  SmallVector<SmallVector<int64_t>> strides = {batchStrides(aShape, m * k),
                                               batchStrides(bShape, k * n)};
  std::vector<double> acc(m * n);
  forEachElement(batch, strides, [&](int64_t bi, ArrayRef<int64_t> o) {
    std::fill(acc.begin(), acc.end(), 0.0);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t p = 0; p < k; ++p) {
        double av = a.getFloat(o[0] + i * k + p);
        int64_t bRow = o[1] + p * n;
        double *row = &acc[i * n];
        for (int64_t j = 0; j < n; ++j)
          row[j] += av * b.getFloat(bRow + j);
      }
    for (int64_t i = 0; i < m * n; ++i)
      out.setFloat(bi * m * n + i, acc[i]);
  });
}

Tensor matmul(Operation *op, const Tensor &a, const Tensor &b) {
  Tensor out = resultTensor(op);
  SmallVector<int64_t> aShape(a.getShape()), bShape(b.getShape());
  if (aShape.size() == 1)
    aShape.insert(aShape.begin(), 1);
  if (bShape.size() == 1)
    bShape.push_back(1);
  SmallVector<int64_t> batch(out.getShape().take_front(
      out.getRank() - (a.getRank() > 1) - (b.getRank() > 1)));
  batchedMatmul(a, aShape, b, bShape, out, batch);
  return out;
}

Tensor conv2d(Conv2DOp op, const Tensor &x, const Tensor &w,
              const Tensor *bias) {
  Tensor out = resultTensor(op);
  ArrayRef<int64_t> xs = x.getShape(), ws = w.getShape(), os = out.getShape();
  ArrayRef<int64_t> stride = op.getStrides(), pad = op.getPadding(),
                    dil = op.getDilations();
  int64_t groups = op.getGroups();
  int64_t n = xs[0], c = xs[1], h = xs[2], wd = xs[3];
  int64_t o = ws[0], cg = ws[1], kh = ws[2], kw = ws[3];
  int64_t oh = os[2], ow = os[3], og = o / groups;
  (void)c;
  for (int64_t b = 0; b < n; ++b)
    for (int64_t oc = 0; oc < o; ++oc) {
      int64_t g = oc / og;
      for (int64_t y = 0; y < oh; ++y)
        for (int64_t xo = 0; xo < ow; ++xo) {
          double acc = bias ? bias->getFloat(oc) : 0.0;
          for (int64_t ic = 0; ic < cg; ++ic) {
            int64_t channel = g * cg + ic;
            for (int64_t i = 0; i < kh; ++i) {
              int64_t iy = y * stride[0] - pad[0] + i * dil[0];
              if (iy < 0 || iy >= h)
                continue;
              for (int64_t j = 0; j < kw; ++j) {
                int64_t ix = xo * stride[1] - pad[1] + j * dil[1];
                if (ix < 0 || ix >= wd)
                  continue;
                acc += x.getFloat(((b * xs[1] + channel) * h + iy) * wd + ix) *
                       w.getFloat(((oc * cg + ic) * kh + i) * kw + j);
              }
            }
          }
          out.setFloat(((b * o + oc) * oh + y) * ow + xo, acc);
        }
    }
  return out;
}

/// Visits each output position of a 2-D pooling window: `fn(outIndex,
/// [hStart, hEnd) x [wStart, wEnd) clipped to the padded input, plane)`.
template <typename Fn>
void forEachWindow(Operation *op, const Tensor &x, Tensor &out,
                   ArrayRef<int64_t> kernel, ArrayRef<int64_t> stride,
                   ArrayRef<int64_t> pad, Fn fn) {
  ArrayRef<int64_t> xs = x.getShape(), os = out.getShape();
  int64_t planes = xs[0] * xs[1], h = xs[2], w = xs[3];
  int64_t oh = os[2], ow = os[3];
  for (int64_t p = 0; p < planes; ++p)
    for (int64_t y = 0; y < oh; ++y)
      for (int64_t xo = 0; xo < ow; ++xo) {
        int64_t hs = y * stride[0] - pad[0], wsStart = xo * stride[1] - pad[1];
        int64_t he = std::min(hs + kernel[0], h + pad[2]);
        int64_t we = std::min(wsStart + kernel[1], w + pad[3]);
        fn((p * oh + y) * ow + xo, p * h * w, hs, he, wsStart, we);
      }
}

Tensor maxPool(MaxPool2DOp op, const Tensor &x) {
  Tensor out = resultTensor(op);
  int64_t h = x.getShape()[2], w = x.getShape()[3];
  ArrayRef<int64_t> kernel = op.getKernel(), dil = op.getDilations();
  forEachWindow(op, x, out, kernel, op.getStrides(), op.getPadding(),
                [&](int64_t oi, int64_t plane, int64_t hs, int64_t,
                    int64_t ws, int64_t) {
                  bool any = false, nan = false;
                  double best = -std::numeric_limits<double>::infinity();
                  int64_t bestInt = std::numeric_limits<int64_t>::min();
                  for (int64_t i = 0; i < kernel[0]; ++i) {
                    int64_t iy = hs + i * dil[0];
                    if (iy < 0 || iy >= h)
                      continue;
                    for (int64_t j = 0; j < kernel[1]; ++j) {
                      int64_t ix = ws + j * dil[1];
                      if (ix < 0 || ix >= w)
                        continue;
                      int64_t idx = plane + iy * w + ix;
                      any = true;
                      if (x.isFloat()) {
                        double v = x.getFloat(idx);
                        nan |= std::isnan(v);
                        best = std::max(best, v);
                      } else {
                        bestInt = std::max(bestInt, x.getInt(idx));
                      }
                    }
                  }
                  if (x.isFloat())
                    out.setFloat(oi, nan ? std::nan("") : best);
                  else
                    out.setInt(oi, any ? bestInt : 0);
                });
  return out;
}

Tensor avgPool(AvgPool2DOp op, const Tensor &x) {
  Tensor out = resultTensor(op);
  int64_t h = x.getShape()[2], w = x.getShape()[3];
  bool includePad = op.getCountIncludePad();
  forEachWindow(op, x, out, op.getKernel(), op.getStrides(), op.getPadding(),
                [&](int64_t oi, int64_t plane, int64_t hs, int64_t he,
                    int64_t ws, int64_t we) {
                  int64_t padded = (he - hs) * (we - ws);
                  int64_t h0 = std::max<int64_t>(hs, 0), h1 = std::min(he, h);
                  int64_t w0 = std::max<int64_t>(ws, 0), w1 = std::min(we, w);
                  double sum = 0;
                  int64_t count = 0;
                  for (int64_t iy = h0; iy < h1; ++iy)
                    for (int64_t ix = w0; ix < w1; ++ix, ++count)
                      sum += x.getFloat(plane + iy * w + ix);
                  int64_t divisor = includePad ? padded : count;
                  out.setFloat(oi, divisor ? sum / divisor : std::nan(""));
                });
  return out;
}

Tensor attention(AttentionOp op, const Tensor &q, const Tensor &k,
                 const Tensor &v, const Tensor *mask) {
  Tensor out = resultTensor(op);
  int64_t rank = q.getRank();
  int64_t lq = q.getShape()[rank - 2], d = q.getShape()[rank - 1];
  int64_t lk = k.getShape()[rank - 2], dv = v.getShape()[rank - 1];
  int64_t batch = q.getNumElements() / (lq * d);
  double scale = op.getEffectiveScale();
  SmallVector<int64_t> scoreShape(q.getShape().drop_back(2));
  scoreShape.push_back(lq);
  scoreShape.push_back(lk);
  Tensor scores(q.getElementType(), scoreShape);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t i = 0; i < lq; ++i)
      for (int64_t j = 0; j < lk; ++j) {
        double s = 0;
        for (int64_t p = 0; p < d; ++p)
          s += q.getFloat((b * lq + i) * d + p) * k.getFloat((b * lk + j) * d + p);
        scores.setFloat((b * lq + i) * lk + j, s * scale);
      }
  if (mask) {
    SmallVector<SmallVector<int64_t>> strides = {
        broadcastStrides(mask->getShape(), scoreShape)};
    bool boolean = mask->getElementType().isInteger(1);
    forEachElement(scoreShape, strides, [&](int64_t i, ArrayRef<int64_t> o) {
      if (boolean) {
        if (!mask->getInt(o[0]))
          scores.setFloat(i, -std::numeric_limits<double>::infinity());
      } else {
        scores.setFloat(i, scores.getFloat(i) + mask->getFloat(o[0]));
      }
    });
  }
  if (op.getIsCausal())
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t i = 0; i < lq; ++i)
        for (int64_t j = i + 1; j < lk; ++j)
          scores.setFloat((b * lq + i) * lk + j,
                          -std::numeric_limits<double>::infinity());
  Tensor probs(q.getElementType(), scoreShape);
  softmaxInto(scores, rank - 1, /*log=*/false, probs);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t i = 0; i < lq; ++i)
      for (int64_t p = 0; p < dv; ++p) {
        double s = 0;
        for (int64_t j = 0; j < lk; ++j)
          s += probs.getFloat((b * lq + i) * lk + j) *
               v.getFloat((b * lk + j) * dv + p);
        out.setFloat((b * lq + i) * dv + p, s);
      }
  return out;
}

} // namespace

std::optional<LogicalResult>
mlir::ober::reference::detail::evaluateContraction(Operation *op,
                                                   ArrayRef<Tensor> operands,
                                                   Results &results) {
  if (isa<MatmulOp>(op)) {
    results.push_back(matmul(op, operands[0], operands[1]));
    return success();
  }
  if (auto conv = dyn_cast<Conv2DOp>(op)) {
    results.push_back(conv2d(conv, operands[0], operands[1],
                             operands.size() > 2 ? &operands[2] : nullptr));
    return success();
  }
  if (auto pool = dyn_cast<MaxPool2DOp>(op)) {
    results.push_back(maxPool(pool, operands[0]));
    return success();
  }
  if (auto pool = dyn_cast<AvgPool2DOp>(op)) {
    results.push_back(avgPool(pool, operands[0]));
    return success();
  }
  if (auto att = dyn_cast<AttentionOp>(op)) {
    results.push_back(attention(att, operands[0], operands[1], operands[2],
                                operands.size() > 3 ? &operands[3] : nullptr));
    return success();
  }
  return std::nullopt;
}
