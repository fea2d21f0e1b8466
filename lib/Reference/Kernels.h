//===- Kernels.h - per-group evaluators of the interpreter ------*- C++ -*-===//
//
// Part of Ober-Train. Internal to the reference interpreter. Each group
// returns std::nullopt for ops it does not own.
//
//===----------------------------------------------------------------------===//

#ifndef OBER_LIB_REFERENCE_KERNELS_H
#define OBER_LIB_REFERENCE_KERNELS_H

#include "ober/Reference/Tensor.h"

#include "mlir/IR/Operation.h"

#include <optional>

namespace mlir::ober::reference::detail {

using Results = SmallVectorImpl<Tensor>;

std::optional<LogicalResult> evaluateElementwise(Operation *op,
                                                 ArrayRef<Tensor> operands,
                                                 Results &results);
std::optional<LogicalResult> evaluateContraction(Operation *op,
                                                 ArrayRef<Tensor> operands,
                                                 Results &results);
std::optional<LogicalResult> evaluateReduction(Operation *op,
                                               ArrayRef<Tensor> operands,
                                               Results &results);
std::optional<LogicalResult> evaluateNormalization(Operation *op,
                                                   ArrayRef<Tensor> operands,
                                                   Results &results);
std::optional<LogicalResult> evaluateIndexing(Operation *op,
                                              ArrayRef<Tensor> operands,
                                              Results &results);
std::optional<LogicalResult> evaluateLoss(Operation *op,
                                          ArrayRef<Tensor> operands,
                                          Results &results);
std::optional<LogicalResult> evaluateGradient(Operation *op,
                                              ArrayRef<Tensor> operands,
                                              Results &results);
std::optional<LogicalResult> evaluateString(Operation *op,
                                            ArrayRef<Tensor> operands,
                                            Results &results);
std::optional<LogicalResult> evaluateShape(Operation *op,
                                           ArrayRef<Tensor> operands,
                                           Results &results);

/// A channels-first windowed op seen as 3-D: spatial dimensions are
/// left-padded with size-1 dimensions (kernel 1, stride 1, no padding).
struct Window3D {
  int64_t in[3], out[3], kernel[3], stride[3], padLow[3], padHigh[3], dil[3];

  Window3D(ArrayRef<int64_t> inShape, ArrayRef<int64_t> outShape,
           ArrayRef<int64_t> kernelSizes, ArrayRef<int64_t> strides,
           ArrayRef<int64_t> padding, ArrayRef<int64_t> dilations) {
    int64_t k = kernelSizes.size(), lead = 3 - k;
    for (int64_t i = 0; i < 3; ++i) {
      bool real = i >= lead;
      int64_t j = i - lead;
      in[i] = real ? inShape[2 + j] : 1;
      out[i] = real ? outShape[2 + j] : 1;
      kernel[i] = real ? kernelSizes[j] : 1;
      stride[i] = real ? strides[j] : 1;
      padLow[i] = real ? padding[j] : 0;
      padHigh[i] = real ? padding[k + j] : 0;
      dil[i] = real && !dilations.empty() ? dilations[j] : 1;
    }
  }
  int64_t inSize() const { return in[0] * in[1] * in[2]; }
  int64_t outSize() const { return out[0] * out[1] * out[2]; }
  int64_t kernelSize() const { return kernel[0] * kernel[1] * kernel[2]; }
};

/// Visits each output position of a pooling window with the window's input
/// coordinates (dilated, unclipped) and the bounds of the padded input.
template <typename Fn>
inline void forEachPoolWindow(const Window3D &win, int64_t planes, Fn fn) {
  for (int64_t p = 0; p < planes; ++p)
    for (int64_t z = 0; z < win.out[0]; ++z)
      for (int64_t y = 0; y < win.out[1]; ++y)
        for (int64_t x = 0; x < win.out[2]; ++x) {
          int64_t start[3] = {z * win.stride[0] - win.padLow[0],
                              y * win.stride[1] - win.padLow[1],
                              x * win.stride[2] - win.padLow[2]};
          fn(((p * win.out[0] + z) * win.out[1] + y) * win.out[2] + x,
             p * win.inSize(), start);
        }
}

/// Calls `fn(index)` for each input position inside the (dilated) window
/// starting at `start` in the plane at `base`, in row-major order.
template <typename Fn>
inline void forEachWindowInput(const Window3D &win, int64_t base,
                               const int64_t *start, Fn fn) {
  for (int64_t i = 0; i < win.kernel[0]; ++i) {
    int64_t iz = start[0] + i * win.dil[0];
    if (iz < 0 || iz >= win.in[0])
      continue;
    for (int64_t j = 0; j < win.kernel[1]; ++j) {
      int64_t iy = start[1] + j * win.dil[1];
      if (iy < 0 || iy >= win.in[1])
        continue;
      for (int64_t l = 0; l < win.kernel[2]; ++l) {
        int64_t ix = start[2] + l * win.dil[2];
        if (ix < 0 || ix >= win.in[2])
          continue;
        fn(base + (iz * win.in[1] + iy) * win.in[2] + ix);
      }
    }
  }
}

/// The divisor of an average-pooling window starting at `start`: the
/// positions it covers inside the padded input, or only the real ones.
inline int64_t averageDivisor(const Window3D &win, const int64_t *start,
                              bool countIncludePad) {
  int64_t padded = 1, real = 1;
  for (int d = 0; d < 3; ++d) {
    int64_t end = std::min(start[d] + win.kernel[d], win.in[d] + win.padHigh[d]);
    padded *= end - start[d];
    real *= std::max<int64_t>(
        std::min(end, win.in[d]) - std::max<int64_t>(start[d], 0), 0);
  }
  return countIncludePad ? padded : real;
}

/// A zero tensor of the static type of `op`'s result `i`.
Tensor resultTensor(Operation *op, unsigned i = 0);

/// softmax or log_softmax of `input` along `axis` into `out`.
void softmaxInto(const Tensor &input, int64_t axis, bool log, Tensor &out);

/// The probabilities of attention over `q` `[..., Lq, D]` and `k`
/// `[..., Lk, D]`: softmax over keys of `q k^T * scale` with `mask` (null:
/// none; i1 keeps where true, a float one is added) and the causal mask,
/// `[..., Lq, Lk]`, held (and rounded) in `elementType`.
Tensor attentionProbs(const Tensor &q, const Tensor &k, const Tensor *mask,
                      double scale, bool causal, Type elementType);

} // namespace mlir::ober::reference::detail

#endif // OBER_LIB_REFERENCE_KERNELS_H
