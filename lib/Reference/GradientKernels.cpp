//===- GradientKernels.cpp - adjoint ops of the backward pass -------------===//
//
// Part of Ober-Train.
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

Tensor convWeightGrad(ConvWeightGradOp op, const Tensor &x, const Tensor &gy) {
  Tensor out = resultTensor(op);
  Window3D win(x.getShape(), gy.getShape(), op.getKernel(), op.getStrides(),
               op.getPadding(), op.getDilations());
  int64_t n = x.getShape()[0], c = x.getShape()[1], o = gy.getShape()[1];
  int64_t groups = op.getGroups(), cg = c / groups, og = o / groups;
  std::vector<double> acc(out.getNumElements(), 0.0);
  for (int64_t b = 0; b < n; ++b)
    for (int64_t oc = 0; oc < o; ++oc) {
      int64_t g = oc / og;
      int64_t gyBase = (b * o + oc) * win.outSize();
      for (int64_t ic = 0; ic < cg; ++ic) {
        int64_t xBase = (b * c + g * cg + ic) * win.inSize();
        int64_t wBase = (oc * cg + ic) * win.kernelSize();
        for (int64_t i = 0; i < win.kernel[0]; ++i)
          for (int64_t j = 0; j < win.kernel[1]; ++j)
            for (int64_t l = 0; l < win.kernel[2]; ++l) {
              double sum = 0;
              for (int64_t z = 0; z < win.out[0]; ++z) {
                int64_t iz = z * win.stride[0] - win.padLow[0] + i * win.dil[0];
                if (iz < 0 || iz >= win.in[0])
                  continue;
                for (int64_t y = 0; y < win.out[1]; ++y) {
                  int64_t iy = y * win.stride[1] - win.padLow[1] + j * win.dil[1];
                  if (iy < 0 || iy >= win.in[1])
                    continue;
                  for (int64_t xo = 0; xo < win.out[2]; ++xo) {
                    int64_t ix = xo * win.stride[2] - win.padLow[2] + l * win.dil[2];
                    if (ix < 0 || ix >= win.in[2])
                      continue;
                    sum += x.getFloat(xBase + (iz * win.in[1] + iy) * win.in[2] + ix) *
                           gy.getFloat(gyBase + (z * win.out[1] + y) * win.out[2] + xo);
                  }
                }
              }
              acc[wBase + (i * win.kernel[1] + j) * win.kernel[2] + l] += sum;
            }
      }
    }
  for (int64_t i = 0, e = out.getNumElements(); i < e; ++i)
    out.setFloat(i, acc[i]);
  return out;
}

Tensor maxPoolGrad(MaxPoolGradOp op, const Tensor &x, const Tensor &gy) {
  Tensor out = resultTensor(op);
  Window3D win(x.getShape(), gy.getShape(), op.getKernel(), op.getStrides(),
               op.getPadding(), op.getDilations());
  std::vector<double> acc(out.getNumElements(), 0.0);
  int64_t planes = x.getShape()[0] * x.getShape()[1];
  forEachPoolWindow(win, planes, [&](int64_t oi, int64_t base, int64_t *start) {
    // The first maximum wins, as in PyTorch; NaN beats any number.
    int64_t best = -1;
    double bestValue = 0;
    forEachWindowInput(win, base, start, [&](int64_t idx) {
      double v = x.getFloat(idx);
      if (best < 0 || v > bestValue || (std::isnan(v) && !std::isnan(bestValue))) {
        best = idx;
        bestValue = v;
      }
    });
    if (best >= 0)
      acc[best] += gy.getFloat(oi);
  });
  for (int64_t i = 0, e = out.getNumElements(); i < e; ++i)
    out.setFloat(i, acc[i]);
  return out;
}

Tensor avgPoolGrad(AvgPoolGradOp op, const Tensor &x, const Tensor &gy) {
  Tensor out = resultTensor(op);
  Window3D win(x.getShape(), gy.getShape(), op.getKernel(), op.getStrides(),
               op.getPadding(), {});
  std::vector<double> acc(out.getNumElements(), 0.0);
  int64_t planes = x.getShape()[0] * x.getShape()[1];
  forEachPoolWindow(win, planes, [&](int64_t oi, int64_t base, int64_t *start) {
    int64_t divisor = averageDivisor(win, start, op.getCountIncludePad());
    if (!divisor)
      return;
    double share = gy.getFloat(oi) / divisor;
    forEachWindowInput(win, base, start, [&](int64_t idx) { acc[idx] += share; });
  });
  for (int64_t i = 0, e = out.getNumElements(); i < e; ++i)
    out.setFloat(i, acc[i]);
  return out;
}

/// dQ, dK and dV of attention (AttentionGradOp's description), in double
/// from probabilities held in double, each rounded once.
void attentionGrad(AttentionGradOp op, ArrayRef<Tensor> operands,
                   Results &results) {
  const Tensor &q = operands[0], &k = operands[1], &v = operands[2],
               &o = operands[3], &go = operands[4];
  const Tensor *mask = operands.size() > 5 ? &operands[5] : nullptr;
  int64_t rank = q.getRank();
  int64_t lq = q.getShape()[rank - 2], d = q.getShape()[rank - 1];
  int64_t lk = k.getShape()[rank - 2], dv = v.getShape()[rank - 1];
  int64_t batch = q.getNumElements() / (lq * d);
  double scale = op.getEffectiveScale();
  Tensor probs =
      attentionProbs(q, k, mask, scale, op.getIsCausal(),
                     Float64Type::get(op.getContext()));
  std::vector<double> dq(q.getNumElements()), dk(k.getNumElements()),
      dvalue(v.getNumElements());
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t i = 0; i < lq; ++i) {
      auto at = [&](const Tensor &t, int64_t row, int64_t width, int64_t c) {
        return t.getFloat((b * row + i) * width + c);
      };
      double rowDot = 0; // rowsum(dO * O)
      for (int64_t p = 0; p < dv; ++p)
        rowDot += at(go, lq, dv, p) * at(o, lq, dv, p);
      for (int64_t j = 0; j < lk; ++j) {
        double pr = probs.getFloat((b * lq + i) * lk + j);
        if (pr == 0)
          continue; // masked (or underflowed): no gradient through it
        double dp = 0;
        for (int64_t p = 0; p < dv; ++p) {
          double g = at(go, lq, dv, p);
          dvalue[(b * lk + j) * dv + p] += pr * g;
          dp += g * v.getFloat((b * lk + j) * dv + p);
        }
        double ds = pr * (dp - rowDot) * scale;
        for (int64_t p = 0; p < d; ++p) {
          dq[(b * lq + i) * d + p] += ds * k.getFloat((b * lk + j) * d + p);
          dk[(b * lk + j) * d + p] += ds * at(q, lq, d, p);
        }
      }
    }
  for (auto [values, like] :
       {std::pair(&dq, &q), std::pair(&dk, &k), std::pair(&dvalue, &v)}) {
    Tensor t(like->getElementType(), like->getShape());
    for (size_t i = 0; i < values->size(); ++i)
      t.setFloat(static_cast<int64_t>(i), (*values)[i]);
    results.push_back(std::move(t));
  }
}

} // namespace

std::optional<LogicalResult>
mlir::ober::reference::detail::evaluateGradient(Operation *op,
                                                ArrayRef<Tensor> operands,
                                                Results &results) {
  if (auto g = dyn_cast<ConvWeightGradOp>(op)) {
    results.push_back(convWeightGrad(g, operands[0], operands[1]));
    return success();
  }
  if (auto g = dyn_cast<MaxPoolGradOp>(op)) {
    results.push_back(maxPoolGrad(g, operands[0], operands[1]));
    return success();
  }
  if (auto g = dyn_cast<AvgPoolGradOp>(op)) {
    results.push_back(avgPoolGrad(g, operands[0], operands[1]));
    return success();
  }
  if (auto g = dyn_cast<AttentionGradOp>(op)) {
    attentionGrad(g, operands, results);
    return success();
  }
  if (auto s = dyn_cast<ScatterElementsAddOp>(op)) {
    const Tensor &indices = operands[1], &updates = operands[2];
    Tensor out = operands[0];
    int64_t axis = s.getAxis(), size = out.getShape()[axis];
    SmallVector<int64_t> outStrides = stridesOf(out.getShape());
    SmallVector<SmallVector<int64_t>> strides = {outStrides};
    strides[0][axis] = 0;
    bool bad = false;
    int64_t badValue = 0;
    forEachElement(indices.getShape(), strides, [&](int64_t i, ArrayRef<int64_t> o) {
      int64_t idx = indices.getInt(i);
      if (idx < 0)
        idx += size;
      if (idx < 0 || idx >= size) {
        bad = true;
        badValue = indices.getInt(i);
        return;
      }
      int64_t pos = o[0] + idx * outStrides[axis];
      if (out.isFloat())
        out.setFloat(pos, out.getFloat(pos) + updates.getFloat(i));
      else
        out.setInt(pos, out.getInt(pos) + updates.getInt(i));
    });
    if (bad)
      return op->emitError("index ") << badValue << " is out of range for size "
                                     << size;
    results.push_back(std::move(out));
    return success();
  }
  return std::nullopt;
}
