//===- PipelineOrder.h - the passes one pipeline stage runs -------*- C++ -*-===//
//
// Part of Ober-Train. The order in which one pipeline device runs the
// forward and backward passes of its micro-batches under each schedule: the
// partitioner emits the step in this order and the planner's timeline
// simulates it, so the prediction describes the program that runs.
//
//===----------------------------------------------------------------------===//

#ifndef OBER_DIALECT_OBER_IR_PIPELINEORDER_H
#define OBER_DIALECT_OBER_IR_PIPELINEORDER_H

#include "ober/Dialect/Ober/IR/OberOps.h"

#include "llvm/ADT/SmallVector.h"

namespace mlir::ober {

/// One pass of a micro-batch through one model chunk of a device:
/// forward, backward (with zero-bubble: its input-gradient part), or the
/// weight-gradient part zero-bubble runs later.
struct PipelinePass {
  enum Kind : unsigned { Forward = 0, Backward = 1, Weight = 2 };
  unsigned microBatch = 0;
  Kind kind = Forward;
  unsigned chunk = 0;
};

/// The passes device `stage` of `stages` runs, in order, for `microBatches`
/// micro-batches and `chunks` model chunks per device (interleaved 1F1B;
/// 1 otherwise).
llvm::SmallVector<PipelinePass> pipelineOrder(Schedule schedule,
                                              unsigned stages, unsigned stage,
                                              unsigned microBatches,
                                              unsigned chunks);

} // namespace mlir::ober

#endif // OBER_DIALECT_OBER_IR_PIPELINEORDER_H
