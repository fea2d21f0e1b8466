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

Tensor conv(ConvOp op, const Tensor &x, const Tensor &w, const Tensor *bias) {
  Tensor out = resultTensor(op);
  ArrayRef<int64_t> ws = w.getShape();
  Window3D win(x.getShape(), out.getShape(), ws.drop_front(2), op.getStrides(),
               op.getPadding(), op.getDilations());
  int64_t n = x.getShape()[0], c = x.getShape()[1], o = ws[0], cg = ws[1];
  int64_t og = o / op.getGroups();
  for (int64_t b = 0; b < n; ++b)
    for (int64_t oc = 0; oc < o; ++oc) {
      int64_t g = oc / og;
      int64_t outBase = (b * o + oc) * win.outSize();
      for (int64_t z = 0; z < win.out[0]; ++z)
        for (int64_t y = 0; y < win.out[1]; ++y)
          for (int64_t xo = 0; xo < win.out[2]; ++xo) {
            double acc = bias ? bias->getFloat(oc) : 0.0;
            for (int64_t ic = 0; ic < cg; ++ic) {
              int64_t inBase = (b * c + g * cg + ic) * win.inSize();
              int64_t wBase = (oc * cg + ic) * win.kernelSize();
              for (int64_t i = 0; i < win.kernel[0]; ++i) {
                int64_t iz = z * win.stride[0] - win.padLow[0] + i * win.dil[0];
                if (iz < 0 || iz >= win.in[0])
                  continue;
                for (int64_t j = 0; j < win.kernel[1]; ++j) {
                  int64_t iy = y * win.stride[1] - win.padLow[1] + j * win.dil[1];
                  if (iy < 0 || iy >= win.in[1])
                    continue;
                  for (int64_t l = 0; l < win.kernel[2]; ++l) {
                    int64_t ix =
                        xo * win.stride[2] - win.padLow[2] + l * win.dil[2];
                    if (ix < 0 || ix >= win.in[2])
                      continue;
                    acc += x.getFloat(inBase + (iz * win.in[1] + iy) * win.in[2] + ix) *
                           w.getFloat(wBase + (i * win.kernel[1] + j) * win.kernel[2] + l);
                  }
                }
              }
            }
            out.setFloat(outBase + (z * win.out[1] + y) * win.out[2] + xo, acc);
          }
    }
  return out;
}

Tensor convTranspose(ConvTransposeOp op, const Tensor &x, const Tensor &w,
                     const Tensor *bias) {
  Tensor out = resultTensor(op);
  ArrayRef<int64_t> ws = w.getShape();
  Window3D win(x.getShape(), out.getShape(), ws.drop_front(2), op.getStrides(),
               op.getPadding(), op.getDilations());
  int64_t n = x.getShape()[0], c = x.getShape()[1];
  int64_t groups = op.getGroups(), cg = c / groups, og = ws[1];
  int64_t o = og * groups;
  std::vector<double> acc(out.getNumElements(), 0.0);
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ic = 0; ic < c; ++ic) {
      int64_t g = ic / cg;
      int64_t inBase = (b * c + ic) * win.inSize();
      for (int64_t z = 0; z < win.in[0]; ++z)
        for (int64_t y = 0; y < win.in[1]; ++y)
          for (int64_t xi = 0; xi < win.in[2]; ++xi) {
            double v = x.getFloat(inBase + (z * win.in[1] + y) * win.in[2] + xi);
            for (int64_t ocg = 0; ocg < og; ++ocg) {
              int64_t oc = g * og + ocg;
              int64_t outBase = (b * o + oc) * win.outSize();
              int64_t wBase = (ic * og + ocg) * win.kernelSize();
              for (int64_t i = 0; i < win.kernel[0]; ++i) {
                int64_t oz = z * win.stride[0] - win.padLow[0] + i * win.dil[0];
                if (oz < 0 || oz >= win.out[0])
                  continue;
                for (int64_t j = 0; j < win.kernel[1]; ++j) {
                  int64_t oy = y * win.stride[1] - win.padLow[1] + j * win.dil[1];
                  if (oy < 0 || oy >= win.out[1])
                    continue;
                  for (int64_t l = 0; l < win.kernel[2]; ++l) {
                    int64_t ox =
                        xi * win.stride[2] - win.padLow[2] + l * win.dil[2];
                    if (ox < 0 || ox >= win.out[2])
                      continue;
                    acc[outBase + (oz * win.out[1] + oy) * win.out[2] + ox] +=
                        v * w.getFloat(wBase + (i * win.kernel[1] + j) * win.kernel[2] + l);
                  }
                }
              }
            }
          }
    }
  int64_t spatial = win.outSize();
  for (int64_t i = 0, e = out.getNumElements(); i < e; ++i)
    out.setFloat(i, acc[i] + (bias ? bias->getFloat((i / spatial) % o) : 0.0));
  return out;
}

Tensor maxPool(MaxPoolOp op, const Tensor &x) {
  Tensor out = resultTensor(op);
  Window3D win(x.getShape(), out.getShape(), op.getKernel(), op.getStrides(),
               op.getPadding(), op.getDilations());
  int64_t planes = x.getShape()[0] * x.getShape()[1];
  forEachPoolWindow(win, planes, [&](int64_t oi, int64_t base, int64_t *start) {
    bool any = false, nan = false;
    double best = -std::numeric_limits<double>::infinity();
    int64_t bestInt = std::numeric_limits<int64_t>::min();
    forEachWindowInput(win, base, start, [&](int64_t idx) {
      any = true;
      if (x.isFloat()) {
        double v = x.getFloat(idx);
        nan |= std::isnan(v);
        best = std::max(best, v);
      } else {
        bestInt = std::max(bestInt, x.getInt(idx));
      }
    });
    if (x.isFloat())
      out.setFloat(oi, nan ? std::nan("") : best);
    else
      out.setInt(oi, any ? bestInt : 0);
  });
  return out;
}

Tensor avgPool(AvgPoolOp op, const Tensor &x) {
  Tensor out = resultTensor(op);
  Window3D win(x.getShape(), out.getShape(), op.getKernel(), op.getStrides(),
               op.getPadding(), {});
  int64_t planes = x.getShape()[0] * x.getShape()[1];
  forEachPoolWindow(win, planes, [&](int64_t oi, int64_t base, int64_t *start) {
    double sum = 0;
    forEachWindowInput(win, base, start,
                       [&](int64_t idx) { sum += x.getFloat(idx); });
    int64_t divisor = averageDivisor(win, start, op.getCountIncludePad());
    out.setFloat(oi, divisor ? sum / divisor : std::nan(""));
  });
  return out;
}

Tensor attention(AttentionOp op, const Tensor &q, const Tensor &k,
                 const Tensor &v, const Tensor *mask) {
  Tensor out = resultTensor(op);
  int64_t rank = q.getRank();
  int64_t lq = q.getShape()[rank - 2];
  int64_t lk = k.getShape()[rank - 2], dv = v.getShape()[rank - 1];
  int64_t batch = q.getNumElements() / (lq * q.getShape()[rank - 1]);
  Tensor probs = attentionProbs(q, k, mask, op.getEffectiveScale(),
                                op.getIsCausal(), q.getElementType());
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
  if (auto c = dyn_cast<ConvOp>(op)) {
    results.push_back(conv(c, operands[0], operands[1],
                           operands.size() > 2 ? &operands[2] : nullptr));
    return success();
  }
  if (auto c = dyn_cast<ConvTransposeOp>(op)) {
    results.push_back(convTranspose(c, operands[0], operands[1],
                                    operands.size() > 2 ? &operands[2] : nullptr));
    return success();
  }
  if (auto pool = dyn_cast<MaxPoolOp>(op)) {
    results.push_back(maxPool(pool, operands[0]));
    return success();
  }
  if (auto pool = dyn_cast<AvgPoolOp>(op)) {
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

Tensor mlir::ober::reference::detail::attentionProbs(
    const Tensor &q, const Tensor &k, const Tensor *mask, double scale,
    bool causal, Type elementType) {
  int64_t rank = q.getRank();
  int64_t lq = q.getShape()[rank - 2], d = q.getShape()[rank - 1];
  int64_t lk = k.getShape()[rank - 2];
  int64_t batch = q.getNumElements() / (lq * d);
  SmallVector<int64_t> scoreShape(q.getShape().drop_back(2));
  scoreShape.push_back(lq);
  scoreShape.push_back(lk);
  Tensor scores(elementType, scoreShape);
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
  if (causal)
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t i = 0; i < lq; ++i)
        for (int64_t j = i + 1; j < lk; ++j)
          scores.setFloat((b * lq + i) * lk + j,
                          -std::numeric_limits<double>::infinity());
  Tensor probs(elementType, scoreShape);
  softmaxInto(scores, rank - 1, /*log=*/false, probs);
  return probs;
}
