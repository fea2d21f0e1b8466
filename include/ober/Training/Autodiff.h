//===- Autodiff.h - reverse-mode differentiation ----------------*- C++ -*-===//
//
// Part of Ober-Train.
//
//===----------------------------------------------------------------------===//

#ifndef OBER_TRAINING_AUTODIFF_H
#define OBER_TRAINING_AUTODIFF_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::ober {

/// Builds `name`, a function with `forward`'s arguments that returns
/// `forward`'s results followed by the gradient of its first result (a
/// scalar float loss) with respect to each argument in `wrt`. The backward
/// pass reads the forward values it needs directly (nothing is computed
/// twice, except the normalisation statistics of layer_norm and rms_norm).
/// Errors name the op that has no gradient rule.
///
/// With `seedArgument`, the function takes one more (last) argument of the
/// loss's type, tagged `ober.loss_seed`: the gradient of the loss to start
/// the backward pass from (1 without it). Dynamic loss scaling passes the
/// scale there, so the loss result itself stays unscaled.
///
/// Attention is differentiated through its decomposition (the forward
/// pass keeps primitive ops), or with `fusedAttention` kept as one op and
/// differentiated by `ober.attention_grad` (an attention with a float
/// mask, whose gradient that op does not give, is still decomposed).
FailureOr<func::FuncOp> buildGradientFunction(func::FuncOp forward,
                                              StringRef name,
                                              ArrayRef<unsigned> wrt,
                                              bool seedArgument = false,
                                              bool fusedAttention = false);

/// Emits, at `builder`'s insertion point, the gradient of sum(`y`) with
/// respect to each of `xs`, through the ops that precede the insertion point
/// in its block.
FailureOr<SmallVector<Value>> differentiateValues(OpBuilder &builder,
                                                  Location loc, Value y,
                                                  ArrayRef<Value> xs);

/// The arguments of `func` tagged `ober.param`.
SmallVector<unsigned> parameterArguments(func::FuncOp func);

} // namespace mlir::ober

#endif // OBER_TRAINING_AUTODIFF_H
