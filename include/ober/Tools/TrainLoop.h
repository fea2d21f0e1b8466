//===- TrainLoop.h - run a train_step on the reference interpreter -*- C++ -*-===//
//
// Part of Ober-Train.
//
//===----------------------------------------------------------------------===//

#ifndef OBER_TOOLS_TRAINLOOP_H
#define OBER_TOOLS_TRAINLOOP_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "ober/Runtime/LRSchedule.h"
#include "ober/Reference/Collectives.h"
#include "ober/Reference/Interpreter.h"
#include "ober/Reference/Tensor.h"
#include "llvm/Support/raw_ostream.h"

#include <map>

namespace mlir::ober {

struct TrainLoopOptions {
  int64_t steps = 1;
  /// The learning rate of each step.
  ::ober::rt::LRSchedule lr;
  /// Batch inputs in order (arguments tagged `ober.batch`). An input with
  /// one more leading dimension than its argument holds one batch per step.
  SmallVector<reference::Tensor> batches;
  /// What errors call each batch (as the user gave it: `--input 2
  /// (y.npy)`); `batch input #k` when empty.
  SmallVector<std::string> batchNames;
  /// Initial parameters by argument index.
  std::map<unsigned, reference::Tensor> parameters;
  /// When set, receives the interpreter's statistics over all steps.
  reference::RunStats *stats = nullptr;
  /// When set and the module has a device grid: the collectives of one
  /// step (every step runs the same ones) and the device count.
  std::vector<reference::CollectiveRecord> *collectives = nullptr;
  int64_t *devices = nullptr;
  /// Run the step compiled for the CPU (compiled once) instead of on the
  /// interpreter; one device only.
  bool compiled = false;
};

/// Runs `step` (built by ober-build-train-step) `steps` times, printing
/// `step <i> loss <value>` to `os`. Returns the final parameters by name.
/// Runs `options.steps` steps of `step`, printing `step <i> loss <value>`,
/// and returns the final parameters by name. A module with a `shard.grid`
/// runs each step on its simulated devices: parameters, state and batches
/// stay global between steps, cut and assembled by `ober.split`.
FailureOr<std::map<std::string, reference::Tensor>>
runTrainLoop(ModuleOp module, func::FuncOp step, const TrainLoopOptions &options,
             llvm::raw_ostream &os);

/// The train_step function: `name`, or the one carrying `ober.train_step`.
func::FuncOp findTrainStep(ModuleOp module, StringRef name);
/// The module's training step (marked by --ober-build-train-step), if
/// any; no error.
func::FuncOp trainStepIn(ModuleOp module);

} // namespace mlir::ober

#endif // OBER_TOOLS_TRAINLOOP_H
