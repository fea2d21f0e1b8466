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

/// A zero tensor of the static type of `op`'s result `i`.
Tensor resultTensor(Operation *op, unsigned i = 0);

/// softmax or log_softmax of `input` along `axis` into `out`.
void softmaxInto(const Tensor &input, int64_t axis, bool log, Tensor &out);

} // namespace mlir::ober::reference::detail

#endif // OBER_LIB_REFERENCE_KERNELS_H
