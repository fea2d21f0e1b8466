//===- MemoryModel.h - bytes a device holds ----------------------*- C++ -*-===//
//
// Part of Ober-Train.
//
//===----------------------------------------------------------------------===//

#ifndef OBER_PLANNING_MEMORYMODEL_H
#define OBER_PLANNING_MEMORYMODEL_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::ober::planning {

/// The most bytes live at once while `func` runs: its arguments plus every
/// intermediate value from its definition to its last use (results nobody
/// reads are freed at once; calls run their callee's body in place), at
/// element-type width. The same rule as the reference interpreter's
/// `--run-stats`, computed from the IR alone.
FailureOr<int64_t> peakLiveBytes(func::FuncOp func);

/// The activations a gradient function saves: bytes of the values computed
/// by the forward part (the ops its first result, the loss, depends on) that
/// the backward part reads. Zero for a function without a backward part.
int64_t savedActivationBytes(func::FuncOp func);

} // namespace mlir::ober::planning

#endif // OBER_PLANNING_MEMORYMODEL_H
