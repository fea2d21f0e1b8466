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
std::optional<LogicalResult> evaluateShape(Operation *op,
                                           ArrayRef<Tensor> operands,
                                           Results &results);

/// A zero tensor of the static type of `op`'s result `i`.
Tensor resultTensor(Operation *op, unsigned i = 0);

/// softmax or log_softmax of `input` along `axis` into `out`.
void softmaxInto(const Tensor &input, int64_t axis, bool log, Tensor &out);

} // namespace mlir::ober::reference::detail

#endif // OBER_LIB_REFERENCE_KERNELS_H
