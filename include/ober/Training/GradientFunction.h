//===- GradientFunction.h - the shape of a gradient function -----*- C++ -*-===//
//
// Part of Ober-Train. What `--ober-build-train-step` makes and the planner
// and the partitioner read: a gradient function returns the loss first,
// then the gradients; its parameters are arguments with `ober.param`, used
// directly or through views (reshapes, transposes, casts).
//
//===----------------------------------------------------------------------===//

#ifndef OBER_TRAINING_GRADIENTFUNCTION_H
#define OBER_TRAINING_GRADIENTFUNCTION_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseSet.h"

namespace mlir::ober {

/// The forward part of a gradient function: the ops its first result (the
/// loss) depends on.
llvm::DenseSet<Operation *> forwardOps(func::FuncOp func);

/// Where each backward op of gradient function `func` runs (a pipeline
/// stage, a planner's segment), given where its forward ops run
/// (`forwardPlace`; -1 or absent for one that runs wherever it is needed:
/// a view of a parameter, a constant): in the lowest place among the values
/// it reads, a forward value (or an argument) counting for the latest
/// place whose forward ops read it, else for where it is made, and a
/// backward one for where it is made. -1 where nothing it reads is placed.
llvm::DenseMap<Operation *, int>
placeBackwardOps(func::FuncOp func, const llvm::DenseSet<Operation *> &forward,
                 const llvm::DenseMap<Operation *, int> &forwardPlace);

/// `v` without the reshapes, transposes and casts (one operand each) that
/// made it a view.
Value viewRoot(Value v);

/// The parameter (a function argument with `ober.param`) `v` is a view
/// of, or null.
BlockArgument parameterRoot(Value v);

/// A lookup in a parameter table: an embedding, or a gather of rows (axis
/// 0) of a parameter or a view of one.
bool isTableLookup(Operation *op);

/// A table lookup of constant ids (positions): rows every sample shares,
/// not rows of samples.
bool looksUpSharedRows(Operation *op);

/// A matmul with a parameter (or a view of one) on its right: its result is
/// an activation (or an activation's gradient), whose tokens sequence
/// parallelism splits; a weight gradient is not.
bool isActivationMatmul(Operation *op);

/// Whether the partial sums `op` makes under tensor parallelism are an
/// activation that sequence parallelism scatters by tokens when completing
/// them: an activation matmul's, or a vocabulary-parallel table lookup's
/// (Megatron's scatter into the sequence-parallel region).
bool makesTokenActivation(Operation *op);

} // namespace mlir::ober

#endif // OBER_TRAINING_GRADIENTFUNCTION_H
