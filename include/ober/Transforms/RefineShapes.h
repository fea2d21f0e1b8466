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

} // namespace mlir::ober

#endif // OBER_TRANSFORMS_REFINESHAPES_H
