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

#include "ober/Dialect/Ober/IR/ShardingDecisions.h"

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

/// Each value of `func` whose size scales with the samples, and its batch
/// dimension: the data arguments' first, followed through each op by its
/// sharding rule (the result dimension holding the batch factor; without a
/// rule, a result typed like a batched operand keeps its dimension). A
/// reduction over the batch (a loss, a parameter's gradient) has none.
/// With one sample (no batch factor in the rules) the dimension is 0 of
/// every non-scalar value computed from the batch and not typed like a
/// parameter.
llvm::DenseMap<Value, int64_t> batchDimensions(func::FuncOp func);

/// `v` without the reshapes, transposes and casts (one operand each) that
/// made it a view.
Value viewRoot(Value v);

/// The parameter (a function argument with `ober.param`) `v` is a view
/// of, or null.
BlockArgument parameterRoot(Value v);

/// The name (`ober.param`) of parameter `arg`, a function argument.
StringRef parameterName(BlockArgument arg);

/// Each parameter of gradient function `func` with the gradient the
/// function returns for it (its last results, one per parameter in
/// argument order); empty when it returns fewer.
SmallVector<std::pair<BlockArgument, Value>>
parameterGradients(func::FuncOp func);

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

/// Whether sequence parallelism splits `op`'s result of `type` by tokens
/// (its dimension rank - 2; ober::hasTokens): rows of a lookup of constant
/// ids (positions) are shared by every sample.
bool splitsByTokens(Operation *op, RankedTensorType type);

/// Sequence parallelism's change to the operand placements `in` of `op`
/// along the tensor-parallel axis before its rule decides: a matmul that
/// would leave partial sums of a weight-sized result from split tokens
/// reads the tokens whole instead (Megatron gathers them for every
/// matmul): one with a whole weight (a head the plan keeps whole) on
/// token-split activations, and a weight gradient whose other operand is
/// whole, when the tokens are no larger than twice its result (else the
/// partial sums are completed).
void gatherTokensFor(Operation *op, SmallVectorImpl<Placement> &in);

} // namespace mlir::ober

#endif // OBER_TRAINING_GRADIENTFUNCTION_H
