//===- MemoryModel.h - bytes a device holds ----------------------*- C++ -*-===//
//
// Part of Ober-Train.
//
//===----------------------------------------------------------------------===//

#ifndef OBER_PLANNING_MEMORYMODEL_H
#define OBER_PLANNING_MEMORYMODEL_H

#include "ober/Training/GradientFunction.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::ober::planning {

/// The most bytes live at once while `func` runs: its arguments plus every
/// intermediate value from its definition to its last use (results nobody
/// reads are freed at once; calls run their callee's body in place), at
/// element-type width. The same rule as the reference interpreter's
/// `--run-stats`, computed from the IR alone. Without `countResults`, the
/// function's results are not counted (they go to buffers held elsewhere,
/// like the gradient accumulators of a training step).
FailureOr<int64_t> peakLiveBytes(func::FuncOp func, bool countResults = true);

/// Per-device bytes of the model state, the ZeRO paper's accounting.
struct ModelState {
  double parameters = 0, gradients = 0, optimizer = 0;
  double total() const { return parameters + gradients + optimizer; }
};

/// fp32 optimizer slots per parameter: Adam's two moments, SGD with
/// momentum's buffer, none for plain SGD (without a master copy).
double optimizerSlots(StringRef optimizer);

/// `count` parameters trained with `optimizer` ("adamw", "adam", "sgd" or
/// "sgd-momentum"), held at `paramBytes` per element (2 for bf16/fp16); with
/// `mixedPrecision` the optimizer also keeps fp32 master weights. ZeRO stage
/// 1 shards the optimizer state over `dataParallel` devices, stage 3 also
/// the parameters; the partitioner scatters the gradients (stage 2) only
/// once they are complete, after the backward passes, so they count whole.
ModelState modelStateBytes(double count, int paramBytes, bool mixedPrecision,
                           StringRef optimizer, int zeroStage,
                           int64_t dataParallel);

using ::mlir::ober::forwardOps;

/// The activations a gradient function saves: bytes of the values computed
/// by the forward part (the ops its first result, the loss, depends on) that
/// the backward part reads. Zero for a function without a backward part.
int64_t savedActivationBytes(func::FuncOp func);

} // namespace mlir::ober::planning

#endif // OBER_PLANNING_MEMORYMODEL_H
