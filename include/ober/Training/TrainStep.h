//===- TrainStep.h - train steps built again for another batch --*- C++ -*-===//
//
// Part of Ober-Train.
//
//===----------------------------------------------------------------------===//

#ifndef OBER_TRAINING_TRAINSTEP_H
#define OBER_TRAINING_TRAINSTEP_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::ober {

/// How many samples a train step takes: per micro-batch, and micro-batches.
struct StepBatch {
  int64_t microBatch = 1, microBatches = 1;
  int64_t samples() const { return microBatch * microBatches; }
  bool operator==(const StepBatch &o) const {
    return microBatch == o.microBatch && microBatches == o.microBatches;
  }
};

/// The loss function `step` differentiates (its `ober.train_step` names
/// it), or null.
func::FuncOp lossFunctionOf(func::FuncOp step);

/// The micro-batches `step` accumulates (`ober.train_step`; 1 when it
/// records none).
int64_t microBatchesOf(func::FuncOp step);

/// Whether `step` returns the global gradient norm after its loss (built
/// with `grad-norm`; `ober.train_step` records it). Partitioned stage
/// functions keep the attribute, so this holds for them too.
bool returnsGradNorm(func::FuncOp step);

/// The loop over the micro-batches in `step` (an `scf.for` with constant
/// bounds and a positive step in its body), or null when it has none.
Operation *microBatchLoopOf(func::FuncOp step);

/// The batch `step` (built by --ober-build-train-step) was built for; fails
/// with an error at `step` when it records no loss function or none of its
/// inputs holds samples.
FailureOr<StepBatch> stepBatchOf(func::FuncOp step);

/// Builds `step` again for `batch`, as --ober-build-train-step with the
/// options it recorded would have built it from a model taking
/// `batch.microBatch` samples: the loss function's sample inputs take that
/// leading size (every shape re-inferred, refineFunctionShapes), then its
/// gradient function and the step (with `batch.microBatches` micro-batches
/// accumulated) are built again. The new gradient function keeps the
/// annotations (discardable attributes, argument attributes) of the old
/// one, which it matches op for op. Returns the new step; the old step and
/// gradient function are erased. Fails with an error naming the input whose
/// shape the model cannot re-specialise (after `purpose`, what asks for the
/// batch), leaving the module unchanged.
FailureOr<func::FuncOp>
respecializeTrainStep(func::FuncOp step, StepBatch batch, StringRef purpose);

} // namespace mlir::ober

#endif // OBER_TRAINING_TRAINSTEP_H
