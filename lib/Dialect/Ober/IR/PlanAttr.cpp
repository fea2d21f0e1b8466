//===- PlanAttr.cpp - #ober.plan ------------------------------------------===//
//
// Part of Ober-Train. The rules every plan obeys, whoever wrote it: the
// planner's search only returns plans that pass, and the partitioner may
// rely on them.
//
//===----------------------------------------------------------------------===//

#include "ober/Dialect/Ober/IR/OberOps.h"

using namespace mlir;
using namespace mlir::ober;

LogicalResult PlanAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                               int64_t tp, int64_t pp, int64_t dp,
                               int64_t microBatch, int64_t numMicroBatches,
                               int64_t globalBatch, Schedule schedule,
                               int64_t chunks, Recompute recompute,
                               bool sequenceParallel, int64_t zeroStage,
                               Precision precision, StringRef function,
                               int64_t localSteps) {
  (void)recompute;
  (void)precision;
  for (auto [name, value] :
       {std::pair("tp", tp), {"pp", pp}, {"dp", dp},
        {"micro_batch", microBatch}, {"num_micro_batches", numMicroBatches},
        {"chunks", chunks}})
    if (value < 1)
      return emitError() << "#ober.plan: " << name << " = " << value
                         << " must be at least 1";
  int64_t samples = 0;
  if (llvm::MulOverflow(dp, microBatch, samples) ||
      llvm::MulOverflow(samples, numMicroBatches, samples) ||
      samples != globalBatch)
    return emitError() << "#ober.plan: global_batch = " << globalBatch
                       << " must be dp x micro_batch x num_micro_batches = "
                       << dp << " x " << microBatch << " x "
                       << numMicroBatches;
  if (zeroStage < 0 || zeroStage > 3)
    return emitError() << "#ober.plan: zero_stage = " << zeroStage
                       << " must be 0, 1, 2 or 3";
  if (sequenceParallel && tp < 2)
    return emitError() << "#ober.plan: sequence_parallel needs tp >= 2";
  if (schedule == Schedule::Interleaved) {
    if (pp < 2 || chunks < 2)
      return emitError() << "#ober.plan: interleaved-1f1b needs pp >= 2 and "
                            "chunks >= 2, got pp = "
                         << pp << " and chunks = " << chunks;
    if (numMicroBatches % pp)
      return emitError() << "#ober.plan: interleaved-1f1b needs "
                            "num_micro_batches ("
                         << numMicroBatches << ") to be a multiple of pp ("
                         << pp << ")";
  } else if (chunks != 1) {
    return emitError() << "#ober.plan: chunks = " << chunks
                       << " needs schedule interleaved-1f1b";
  }
  if (localSteps < 1)
    return emitError() << "#ober.plan: local_steps = " << localSteps
                       << " must be at least 1";
  if (localSteps > 1 && (dp < 2 || zeroStage != 0))
    return emitError() << "#ober.plan: local_steps = " << localSteps
                       << " (local SGD) needs dp >= 2 and zero_stage = 0, "
                          "got dp = "
                       << dp << " and zero_stage = " << zeroStage;
  if (function.empty())
    return emitError() << "#ober.plan: function must name the gradient "
                          "function the plan is for";
  return success();
}
