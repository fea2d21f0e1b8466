//===- NormalizationKernels.cpp - layer, rms and batch normalisation ------===//
//
// Part of Ober-Train.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"
#include "ober/Dialect/Ober/IR/OberOps.h"

#include <cmath>

using namespace mlir;
using namespace mlir::ober;
using namespace mlir::ober::reference;
using namespace mlir::ober::reference::detail;

namespace {

/// Normalises each group of the trailing `axis..rank` dimensions.
Tensor normalizeTrailing(Operation *op, const Tensor &x, int64_t axis,
                         double epsilon, const Tensor *scale,
                         const Tensor *bias, bool rms) {
  Tensor out = resultTensor(op);
  int64_t size = 1;
  for (int64_t d = axis; d < x.getRank(); ++d)
    size *= x.getShape()[d];
  int64_t groups = size ? x.getNumElements() / size : 0;
  for (int64_t g = 0; g < groups; ++g) {
    int64_t base = g * size;
    double mean = 0, sq = 0;
    if (!rms) {
      for (int64_t j = 0; j < size; ++j)
        mean += x.getFloat(base + j);
      mean /= size;
    }
    for (int64_t j = 0; j < size; ++j) {
      double c = x.getFloat(base + j) - mean;
      sq += c * c;
    }
    double inv = 1.0 / std::sqrt(sq / size + epsilon);
    for (int64_t j = 0; j < size; ++j) {
      double y = (x.getFloat(base + j) - mean) * inv;
      if (scale)
        y *= scale->getFloat(j);
      if (bias)
        y += bias->getFloat(j);
      out.setFloat(base + j, y);
    }
  }
  return out;
}

/// Per-channel mean and biased variance of x [N, C, ...].
void channelStats(const Tensor &x, std::vector<double> &mean,
                  std::vector<double> &var, int64_t &count) {
  int64_t n = x.getShape()[0], c = x.getShape()[1];
  int64_t inner = c ? x.getNumElements() / (n * c) : 0;
  count = n * inner;
  mean.assign(c, 0.0);
  var.assign(c, 0.0);
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t i = 0; i < inner; ++i)
        mean[ch] += x.getFloat((b * c + ch) * inner + i);
  for (double &m : mean)
    m /= count;
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t i = 0; i < inner; ++i) {
        double d = x.getFloat((b * c + ch) * inner + i) - mean[ch];
        var[ch] += d * d;
      }
  for (double &v : var)
    v /= count;
}

void normalizeChannels(const Tensor &x, ArrayRef<double> mean,
                       ArrayRef<double> var, const Tensor &scale,
                       const Tensor &bias, double epsilon, Tensor &out) {
  int64_t n = x.getShape()[0], c = x.getShape()[1];
  int64_t inner = c ? x.getNumElements() / (n * c) : 0;
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ch = 0; ch < c; ++ch) {
      double inv = 1.0 / std::sqrt(var[ch] + epsilon);
      for (int64_t i = 0; i < inner; ++i) {
        int64_t idx = (b * c + ch) * inner + i;
        out.setFloat(idx, (x.getFloat(idx) - mean[ch]) * inv *
                                  scale.getFloat(ch) +
                              bias.getFloat(ch));
      }
    }
}

} // namespace

std::optional<LogicalResult>
mlir::ober::reference::detail::evaluateNormalization(Operation *op,
                                                     ArrayRef<Tensor> operands,
                                                     Results &results) {
  if (auto ln = dyn_cast<LayerNormOp>(op)) {
    const Tensor *scale = nullptr, *bias = nullptr;
    unsigned next = 1;
    if (ln.getScale())
      scale = &operands[next++];
    if (ln.getBias())
      bias = &operands[next++];
    results.push_back(normalizeTrailing(op, operands[0], ln.getAxis(),
                                        ln.getEpsilon().convertToDouble(),
                                        scale, bias, /*rms=*/false));
    return success();
  }
  if (auto rms = dyn_cast<RMSNormOp>(op)) {
    results.push_back(normalizeTrailing(
        op, operands[0], rms.getAxis(), rms.getEpsilon().convertToDouble(),
        rms.getScale() ? &operands[1] : nullptr, nullptr, /*rms=*/true));
    return success();
  }
  if (auto bn = dyn_cast<BatchNormInferenceOp>(op)) {
    const Tensor &x = operands[0];
    int64_t c = x.getShape()[1];
    std::vector<double> mean(c), var(c);
    for (int64_t ch = 0; ch < c; ++ch) {
      mean[ch] = operands[3].getFloat(ch);
      var[ch] = operands[4].getFloat(ch);
    }
    Tensor out = resultTensor(op);
    normalizeChannels(x, mean, var, operands[1], operands[2],
                      bn.getEpsilon().convertToDouble(), out);
    results.push_back(std::move(out));
    return success();
  }
  if (auto bn = dyn_cast<BatchNormTrainingOp>(op)) {
    const Tensor &x = operands[0];
    std::vector<double> mean, var;
    int64_t count;
    channelStats(x, mean, var, count);
    Tensor out = resultTensor(op, 0);
    normalizeChannels(x, mean, var, operands[1], operands[2],
                      bn.getEpsilon().convertToDouble(), out);
    double m = bn.getMomentum().convertToDouble();
    Tensor runMean = resultTensor(op, 1), runVar = resultTensor(op, 2);
    for (size_t ch = 0; ch < mean.size(); ++ch) {
      double unbiased = count > 1 ? var[ch] * count / (count - 1) : var[ch];
      runMean.setFloat(ch, (1 - m) * operands[3].getFloat(ch) + m * mean[ch]);
      runVar.setFloat(ch, (1 - m) * operands[4].getFloat(ch) + m * unbiased);
    }
    results.push_back(std::move(out));
    results.push_back(std::move(runMean));
    results.push_back(std::move(runVar));
    return success();
  }
  return std::nullopt;
}
