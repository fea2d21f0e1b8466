//===- LossKernels.cpp - cross-entropy and mean squared error -------------===//
//
// Part of Ober-Train.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"
#include "ober/Dialect/Ober/IR/OberOps.h"

using namespace mlir;
using namespace mlir::ober;
using namespace mlir::ober::reference;
using namespace mlir::ober::reference::detail;

namespace {

/// Stores per-sample `losses` reduced by `reduction` over `count` samples.
Tensor reduceLoss(Operation *op, ArrayRef<double> losses, double count,
                  LossReduction reduction) {
  Tensor out = resultTensor(op);
  if (reduction == LossReduction::none) {
    for (size_t i = 0; i < losses.size(); ++i)
      out.setFloat(i, losses[i]);
    return out;
  }
  double sum = 0;
  for (double l : losses)
    sum += l;
  out.setFloat(0, reduction == LossReduction::mean ? sum / count : sum);
  return out;
}

FailureOr<Tensor> crossEntropy(CrossEntropyOp op, const Tensor &logits,
                               const Tensor &targets) {
  int64_t classes = logits.getShape().back();
  int64_t samples = classes ? logits.getNumElements() / classes : 0;
  Tensor logProbs(logits.getElementType(), logits.getShape());
  softmaxInto(logits, logits.getRank() - 1, /*log=*/true, logProbs);
  double smoothing = op.getLabelSmoothing().convertToDouble();
  std::optional<int64_t> ignore = op.getIgnoreIndex();
  bool classTargets = !targets.isFloat();
  std::vector<double> losses(samples, 0.0);
  double counted = 0;
  for (int64_t s = 0; s < samples; ++s) {
    int64_t base = s * classes;
    double sumLogProbs = 0;
    for (int64_t c = 0; c < classes; ++c)
      sumLogProbs += logProbs.getFloat(base + c);
    if (classTargets) {
      int64_t t = targets.getInt(s);
      if (ignore && t == *ignore)
        continue;
      if (t < 0 || t >= classes)
        return op.emitError("target class ")
               << t << " of sample " << s << " is out of range for "
               << classes << " classes";
      losses[s] = -((1 - smoothing) * logProbs.getFloat(base + t) +
                    smoothing / classes * sumLogProbs);
      counted += 1;
      continue;
    }
    double l = 0;
    for (int64_t c = 0; c < classes; ++c)
      l -= ((1 - smoothing) * targets.getFloat(base + c) + smoothing / classes) *
           logProbs.getFloat(base + c);
    losses[s] = l;
    counted += 1;
  }
  return reduceLoss(op, losses, counted, op.getReduction());
}

} // namespace

std::optional<LogicalResult>
mlir::ober::reference::detail::evaluateLoss(Operation *op,
                                            ArrayRef<Tensor> operands,
                                            Results &results) {
  if (auto ce = dyn_cast<CrossEntropyOp>(op)) {
    FailureOr<Tensor> out = crossEntropy(ce, operands[0], operands[1]);
    if (failed(out))
      return failure();
    results.push_back(std::move(*out));
    return success();
  }
  if (auto mse = dyn_cast<MSELossOp>(op)) {
    const Tensor &a = operands[0], &b = operands[1];
    std::vector<double> losses(a.getNumElements());
    for (int64_t i = 0, e = a.getNumElements(); i < e; ++i) {
      double d = a.getFloat(i) - b.getFloat(i);
      losses[i] = d * d;
    }
    results.push_back(reduceLoss(op, losses, losses.size(), mse.getReduction()));
    return success();
  }
  return std::nullopt;
}
