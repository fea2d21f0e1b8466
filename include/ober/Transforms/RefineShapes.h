//===- RefineShapes.h - pin dynamic shapes ----------------------*- C++ -*-===//
//
// Part of Ober-Train.
//
//===----------------------------------------------------------------------===//

#ifndef OBER_TRANSFORMS_REFINESHAPES_H
#define OBER_TRANSFORMS_REFINESHAPES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::ober {

/// Gives `func`'s arguments the (more static) `argTypes` and re-infers every
/// result type in its body, then updates the function's result types and
/// verifies it. Reshape and broadcast_to results with dynamic sizes are
/// resolved from their operands. Fails with an error at the op whose types
/// no longer agree.
LogicalResult refineFunctionShapes(func::FuncOp func, TypeRange argTypes);

/// Where a batch sits in a value: dimension `dim` is [groups] x [from] x
/// [the rest] (`from` the batch, which becomes `to` when re-specialised).
struct BatchAt {
  int64_t dim = -1, groups = 1, from = 1, to = 1;
};

/// The batch of each value of `body`, followed from `arguments` (where it
/// sits in each) through every op by its sharding rule: the factor that
/// holds it in an operand holds it in the results. Values it does not
/// reach, or that no one factor holds, are absent.
DenseMap<Value, BatchAt>
followBatch(Block &body, ArrayRef<std::pair<BlockArgument, BatchAt>> arguments);

} // namespace mlir::ober

#endif // OBER_TRANSFORMS_REFINESHAPES_H
