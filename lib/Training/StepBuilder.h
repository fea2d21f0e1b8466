//===- StepBuilder.h - the train-step builder's pieces ----------*- C++ -*-===//
//
// Part of Ober-Train. Internal to the training library: the options a train
// step is built with (kept in its `ober.train_step` attribute, so that the
// step can be built again for another batch), the loss function and the
// step around a gradient function (TrainStep.cpp), used by the pass and by
// re-specialisation (Respecialize.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef OBER_LIB_TRAINING_STEPBUILDER_H
#define OBER_LIB_TRAINING_STEPBUILDER_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <string>

namespace mlir::ober::training {

/// The options of one train step.
struct StepOptions {
  std::string loss = "auto", optimizer = "adamw";
  double momentum = 0, beta1 = 0.9, beta2 = 0.999, eps = 1e-8, weightDecay = -1,
         labelSmoothing = 0, clipNorm = 0;
  bool nesterov = false;
  /// The step returns the global gradient norm after the loss.
  bool gradNorm = false;
  int64_t microBatches = 1;
  /// Dynamic loss scaling: "none" or "dynamic"; the first scale (a power of
  /// two) and the number of overflow-free steps before it doubles.
  std::string lossScale = "none";
  double lossScaleInit = 32768;
  int64_t lossScaleWindow = 2000;
  /// Attention stays one op, differentiated by ober.attention_grad (not
  /// through its decomposition).
  bool fusedAttention = false;
};

/// The options `step` was built with, from its `ober.train_step`; fails
/// with an error at `step` naming a missing entry.
FailureOr<StepOptions> readStepOptions(func::FuncOp step);

/// Adds a loss to `forward`: a new function returning the scalar loss, with
/// the forward's arguments and (for supervised losses) a target argument.
/// Resolves `o.loss = "auto"`.
FailureOr<func::FuncOp> buildLossFunction(func::FuncOp forward, StepOptions &o);

/// Builds `train_step` around `grad` (the loss function's gradient
/// function).
FailureOr<func::FuncOp> buildStep(func::FuncOp lossFn, func::FuncOp grad,
                                  const StepOptions &o);

/// The gradient function of `lossFn` (private, `<loss>_grad`) and the
/// train step around it.
FailureOr<func::FuncOp> buildGradientAndStep(func::FuncOp lossFn,
                                             const StepOptions &o);

/// The arguments of `lossFn` that hold samples along their leading
/// dimension: every input that is not a parameter, has a rank and the
/// leading size of the first such input (a rank-0 dropout seed does not).
SmallVector<unsigned> sampleArguments(func::FuncOp lossFn);

} // namespace mlir::ober::training

#endif // OBER_LIB_TRAINING_STEPBUILDER_H
