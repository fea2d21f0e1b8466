//===- Timeline.h - a pipeline schedule simulated pass by pass ----*- C++ -*-===//
//
// Part of Ober-Train. The planner's pipeline model: every device runs its
// passes in the order the partitioner emits them (PipelineOrder.h); a pass
// starts when the device is free and what it reads has arrived (the
// previous stage's forward pass plus the transfer, the next stage's
// backward pass plus the transfer). Stages of unequal cost (the first with
// the embedding, the last with the head and loss), transfer latency and the
// schedule's warm-up and drain come out of the simulation instead of a
// closed-form bubble. The report draws the same events.
//
//===----------------------------------------------------------------------===//

#ifndef OBER_PLANNING_TIMELINE_H
#define OBER_PLANNING_TIMELINE_H

#include "ober/Dialect/Ober/IR/PipelineOrder.h"

#include "llvm/ADT/ArrayRef.h"

#include <vector>

namespace mlir::ober::planning {

/// Seconds of one model chunk's passes of one micro-batch on its device.
struct ChunkTimes {
  /// Forward; backward (with recomputation; under zero-bubble only the
  /// input-gradient part); zero-bubble's weight-gradient part.
  double forward = 0, backward = 0, weight = 0;
  /// Transfers to the next virtual stage (the activation) and to the
  /// previous one (its gradient).
  double sendForward = 0, sendBackward = 0;
};

struct TimelineEvent {
  unsigned device = 0, microBatch = 0, chunk = 0;
  PipelinePass::Kind kind = PipelinePass::Forward;
  double start = 0, end = 0;
};

struct Timeline {
  /// Every pass (when asked for), in the order each device runs them.
  std::vector<TimelineEvent> events;
  /// When the last pass ends.
  double makespan = 0;
  /// Per device: seconds of passes, and when its last pass ends (its
  /// gradients are complete then).
  std::vector<double> busy, finish;
  /// Per device: when its last backward (or weight-gradient) pass starts.
  std::vector<double> lastBackwardStart;
};

/// Simulates `microBatches` micro-batches through `stages` devices with
/// `chunks` model chunks each under `schedule`; `times[c * stages + d]` are
/// the times of chunk c on device d (virtual stage c * stages + d).
Timeline simulatePipeline(Schedule schedule, unsigned stages,
                          unsigned microBatches, unsigned chunks,
                          llvm::ArrayRef<ChunkTimes> times,
                          bool keepEvents = false);

} // namespace mlir::ober::planning

#endif // OBER_PLANNING_TIMELINE_H
